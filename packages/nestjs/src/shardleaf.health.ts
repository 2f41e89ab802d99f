import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { SHARDLEAF_OPTIONS, ShardleafModuleOptions } from './shardleaf.tokens';

/** `up`, or why not (`not ready (HTTP 503)`, `unreachable (ECONNREFUSED)`). */
type ServerState = string;

/**
 * A `@nestjs/terminus` health indicator: asks every configured server for `GET /health/ready`
 * (timeout `healthTimeoutMs`, default 1 s) and is up while at least one of them is ready, the
 * client's failover having somewhere to go. Details list each server's state.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.shardleaf.isHealthy('shardleaf')]); }
 * ```
 */
@Injectable()
export class ShardleafHealthIndicator {
  private readonly servers: string[];
  private readonly timeoutMs: number;
  private readonly fetch: (url: string, init: { signal: AbortSignal }) => Promise<{ status: number }>;

  constructor(
    @Inject(SHARDLEAF_OPTIONS) options: ShardleafModuleOptions,
    private readonly indicators: HealthIndicatorService,
  ) {
    this.servers = (typeof options.servers === 'string' ? [options.servers] : [...options.servers]).map((s) => s.replace(/\/+$/, ''));
    this.timeoutMs = options.healthTimeoutMs ?? 1000;
    const custom = options.fetch;
    const headers = options.headers ?? {};
    this.fetch = custom
      ? (url, init) => custom(url, { method: 'GET', headers, signal: init.signal })
      : (url, init) => fetch(url, { headers, signal: init.signal });
  }

  async isHealthy(key = 'shardleaf'): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const states = await Promise.all(this.servers.map((server) => this.probe(server)));
    const servers: Record<string, ServerState> = {};
    this.servers.forEach((server, i) => (servers[server] = states[i]));
    return states.includes('up') ? indicator.up({ servers }) : indicator.down({ servers });
  }

  private async probe(server: string): Promise<ServerState> {
    try {
      const res = await this.fetch(`${server}/health/ready`, { signal: AbortSignal.timeout(this.timeoutMs) });
      return res.status === 200 ? 'up' : `not ready (HTTP ${res.status})`;
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return `unreachable (${cause ?? (err as Error).message})`;
    }
  }
}
