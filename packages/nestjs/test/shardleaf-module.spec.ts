import { Controller, Get, INestApplication, Injectable, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { ShardleafClient, ShardleafClosedError, decodeQueueId, shardOf } from '@shardleaf/client';
import { freePort } from '../../../test/support/free-port';
import { TestEnv, createTestEnv, request, startApp } from '../../../test/support/test-env';
import { ShardleafHealthIndicator, ShardleafModule } from '../src';

/** A business service of the user's application: it only injects the client. */
@Injectable()
class OrderIds {
  constructor(readonly ids: ShardleafClient) {}

  async all(): Promise<{ queue: bigint; segment: bigint; snowflake: bigint }> {
    return {
      queue: await this.ids.queueId(3, 'alice'),
      segment: await this.ids.segmentId('orders'),
      snowflake: await this.ids.snowflakeId('orders'),
    };
  }
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly shardleaf: ShardleafHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.shardleaf.isHealthy('shardleaf')]);
  }
}

/** The README's sample: the servers come from ConfigService (here a loaded value, no .env file). */
function userApp(servers: string): new () => unknown {
  @Module({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ SHARDLEAF_SERVERS: servers })] }),
      TerminusModule,
      ShardleafModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          servers: config.getOrThrow<string>('SHARDLEAF_SERVERS').split(','),
          timeoutMs: 1000,
          healthTimeoutMs: 500,
        }),
      }),
    ],
    controllers: [HealthController],
    providers: [OrderIds],
  })
  class UserAppModule {}
  return UserAppModule;
}

async function boot(module: new () => unknown): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), { logger: false, abortOnError: false });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe('@shardleaf/nestjs in a small Nest application against a real shardleaf', () => {
  let env: TestEnv;
  let shardleaf: INestApplication;
  let url: string;

  beforeAll(async () => {
    env = await createTestEnv('nestjs_module');
    shardleaf = await startApp(env.config({ SNOWFLAKE_IP: '127.0.0.1' }));
    await shardleaf.listen(0, '127.0.0.1');
    url = (await shardleaf.getUrl()).replace('[::1]', '127.0.0.1');
    const admin = shardleaf as NestFastifyApplication;
    expect((await request(admin, 'POST', '/admin/apps', { body: { appId: 3, appName: 'orders', step: 100 } })).status).toBe(201);
    expect((await request(admin, 'POST', '/admin/segment/tags', { body: { tag: 'orders', step: 100 } })).status).toBe(201);
  });

  afterAll(async () => {
    await shardleaf?.close();
    await env?.cleanup();
  });

  it('forRootAsync with ConfigService: an injected ShardleafClient gets IDs of all three generators, and is closed on shutdown', async () => {
    const app = await boot(userApp(url));
    const orders = app.get(OrderIds);
    const first = await orders.all();
    const second = await orders.all();
    expect(decodeQueueId(first.queue)).toMatchObject({ appId: 3, shard: shardOf('alice') });
    expect(second.queue).toBeGreaterThan(first.queue);
    expect(second.segment).toBeGreaterThan(first.segment);
    expect(second.snowflake).toBeGreaterThan(first.snowflake);
    const client = app.get(ShardleafClient);
    expect(client).toBe(orders.ids);
    await app.close();
    await expect(client.queueId(3, 'alice')).rejects.toBeInstanceOf(ShardleafClosedError);
  });

  it('the health indicator is up while a server is ready, and down when the servers are unreachable', async () => {
    const app = await boot(userApp(url));
    const up = await app.inject({ method: 'GET', url: '/health' });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toMatchObject({ status: 'ok', info: { shardleaf: { status: 'up', servers: { [url]: 'up' } } } });
    await app.close();

    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await boot(userApp(nobody));
    const res = await down.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    const body = res.json<{ status: string; error: { shardleaf: { status: string; servers: Record<string, string> } } }>();
    expect(body.status).toBe('error');
    expect(body.error.shardleaf.status).toBe('down');
    expect(body.error.shardleaf.servers[nobody]).toMatch(/^unreachable/);
    await down.close();
  });

  it('forRoot takes the options directly; bad options stop the start naming the option', async () => {
    @Module({ imports: [ShardleafModule.forRoot({ servers: url, isGlobal: true })], providers: [OrderIds] })
    class StaticModule {}
    const app = await boot(StaticModule);
    expect((await app.get(OrderIds).all()).snowflake).toBeGreaterThan(0n);
    await app.close();

    @Module({ imports: [ShardleafModule.forRoot({ servers: url, prefetchAt: 2 })] })
    class BadModule {}
    await expect(boot(BadModule)).rejects.toThrow(/prefetchAt/);
  });
});
