import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OwnRedisServer } from '../../support/redis-server';
import { readinessUntil } from '../../support/readiness';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { TcpProxy } from '../../support/tcp-proxy';

describe('health: liveness and readiness', () => {
  let env: TestEnv;
  let redis: OwnRedisServer;
  let mysqlProxy: TcpProxy;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('health');
    redis = await OwnRedisServer.start();
    const dbUrl = new URL(env.env.DATABASE_URL);
    mysqlProxy = await TcpProxy.start(Number(dbUrl.port || 3306), dbUrl.hostname);
    dbUrl.host = `127.0.0.1:${mysqlProxy.port}`;
    app = await startApp(env.config({ REDIS_URL: redis.url, DATABASE_URL: dbUrl.toString(), DB_POOL_SIZE: '2' }));
  });

  afterAll(async () => {
    await app?.close();
    await mysqlProxy?.close();
    await redis?.destroy();
    await env?.cleanup();
  });

  it('is live and ready with every backend up and every generator initialised', async () => {
    const live = await request(app, 'GET', '/health/live', { token: null });
    expect(live.status).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const ready = await readinessUntil(app, 200);
    expect(ready.status).toBe('ok');
    expect(Object.keys(ready.info ?? {}).sort()).toEqual(['generators', 'mysql', 'redis']);
    expect(ready.info?.generators).toMatchObject({ status: 'up', queue: true, segment: true, snowflake: true });
  });

  it('turns not ready (503 JSON naming redis) while Redis is away, and ready again after', async () => {
    await redis.stop();
    const down = await readinessUntil(app, 503);
    expect(down.status).toBe('error');
    expect(down.error?.redis?.status).toBe('down');
    expect(down.error?.mysql).toBeUndefined();
    // Liveness does not depend on the backends.
    expect((await request(app, 'GET', '/health/live', { token: null })).status).toBe(200);
    await redis.resume();
    expect((await readinessUntil(app, 200)).status).toBe('ok');
  });

  it('turns not ready (503 JSON naming mysql) while MySQL is unreachable, and ready again after', async () => {
    mysqlProxy.cut();
    const down = await readinessUntil(app, 503);
    expect(down.error?.mysql?.status).toBe('down');
    expect(down.error?.redis).toBeUndefined();
    mysqlProxy.restore();
    expect((await readinessUntil(app, 200)).status).toBe('ok');
  });
});
