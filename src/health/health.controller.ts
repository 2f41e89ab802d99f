import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { FastifyReply } from 'fastify';
import { BackendProbes } from './backend-probes';
import { GeneratorState } from './generator-state';

/**
 * Liveness (the process answers) and readiness (MySQL, Redis — its client and the queue's pop
 * connection —, ZooKeeper in a zk mode, and every enabled generator initialised). A load balancer
 * sends traffic only while /health/ready is 200.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly probes: BackendProbes,
    private readonly generators: GeneratorState,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    const checks = [
      () => this.probe('mysql', () => this.probes.mysql()),
      () => this.probe('redis', () => this.probes.redisPing()),
      () => this.generatorCheck(),
    ];
    if (this.probes.usesZookeeper) {
      checks.push(() => this.probe('zookeeper', () => this.probes.zookeeper()));
    }
    try {
      return await this.health.check(checks);
    } catch (err) {
      // Terminus reports "not ready" as an HttpException: answer its result as the 503 body.
      if (err instanceof ServiceUnavailableException) {
        reply.status(503);
        return err.getResponse() as HealthCheckResult;
      }
      throw err;
    }
  }

  private async probe(key: string, run: () => Promise<void>) {
    const indicator = this.indicators.check(key);
    try {
      await run();
      return indicator.up();
    } catch (err) {
      return indicator.down({ message: err instanceof Error ? err.message : String(err) });
    }
  }

  private generatorCheck() {
    const indicator = this.indicators.check('generators');
    const state = this.generators.readiness();
    const ready = state.queue && state.segment !== false && state.snowflake !== false;
    const details = { ...state };
    return ready ? indicator.up(details) : indicator.down(details);
  }
}
