import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OwnRedisServer } from '../../support/redis-server';
import { readinessUntil } from '../../support/readiness';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';
import { TcpProxy } from '../../support/tcp-proxy';

describe('health: liveness and readiness', () => {
  const suite = appSuite('health');
  let redis: OwnRedisServer;
  let mysqlProxy: TcpProxy;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    redis = await OwnRedisServer.start();
    suite.defer(() => redis.destroy());
    const dbUrl = new URL(suite.env.env.DATABASE_URL);
    mysqlProxy = await TcpProxy.start(Number(dbUrl.port || 3306), dbUrl.hostname);
    suite.defer(() => mysqlProxy.close());
    dbUrl.host = `127.0.0.1:${mysqlProxy.port}`;
    app = await suite.start({ REDIS_URL: redis.url, DATABASE_URL: dbUrl.toString(), DB_POOL_SIZE: '2' });
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
    // In our words: the backend, its variable and its address, and what is wrong.
    expect(down.error?.redis?.message).toMatch(
      new RegExp(`^Redis at REDIS_URL \\(127\\.0\\.0\\.1:${new URL(redis.url).port}/0\\) (is not connected|refused the connection|closed the connection)`),
    );
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
    expect(down.error?.mysql?.message).toMatch(new RegExp(`^MySQL at DATABASE_URL \\(127\\.0\\.0\\.1:${mysqlProxy.port}/`));
    expect(down.error?.redis).toBeUndefined();
    mysqlProxy.restore();
    expect((await readinessUntil(app, 200)).status).toBe('ok');
  });
});
