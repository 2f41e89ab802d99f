import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { redisUrlParts } from '../../../src/config/redis-config';
import { POP_CONNECTION, PopConnection } from '../../../src/queue-id/redis/pop-connection';
import { OwnRedisServer } from '../../support/redis-server';
import { readinessUntil } from '../../support/readiness';
import { appSuite } from '../../support/app-suite';
import { expectError, request } from '../../support/test-env';
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

/**
 * On a standalone Redis the queue IDs pop on a connection of their own (the pop connection), not
 * through the ioredis client: readiness pings both, so an instance whose gets fail because only
 * its pop connection cannot reach Redis leaves the load balancer's rotation.
 */
describe('health: readiness follows the pop connection', () => {
  const suite = appSuite('health_pops');
  let proxy: TcpProxy;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const redisUrl = new URL(suite.env.env.REDIS_URL);
    proxy = await TcpProxy.start(Number(redisUrl.port || 6379), redisUrl.hostname);
    suite.defer(() => proxy.close());
    // The app's ioredis client goes straight to Redis; its pop connection through the proxy.
    const popConnection = new PopConnection({ ...redisUrlParts(redisUrl.toString()), host: '127.0.0.1', port: proxy.port }, 500);
    app = await suite.start({ QUEUE_REFILL_AHEAD: 'false' }, [{ provide: POP_CONNECTION, useValue: popConnection }]);
    const created = await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'ready-pops', step: 1000 } });
    expect(created.status).toBe(201);
  });

  it('is ready while the pop connection answers; not ready (naming it) while it cannot reach Redis; ready again after', async () => {
    expect((await readinessUntil(app, 200)).info?.redis?.status).toBe('up');
    expect((await request(app, 'GET', '/api/id/5?gatePass=a')).status).toBe(200);

    proxy.cut();
    try {
      const down = await readinessUntil(app, 503);
      expect(down.error?.redis?.message).toMatch(/^Redis at REDIS_URL \(127\.0\.0\.1:\d+\/\d+\) closed the connection on the pop connection \(queue ID pops\)$/);
      expect(down.error?.mysql).toBeUndefined();
      expectError(await request(app, 'GET', '/api/id/5?gatePass=a'), 503, -109);
    } finally {
      proxy.restore();
    }
    expect((await readinessUntil(app, 200)).status).toBe('ok');
    expect((await request(app, 'GET', '/api/id/5?gatePass=a')).status).toBe(200);
  });

  it('is not ready, within the probe bound, while the pop connection is silent (a frozen path)', async () => {
    expect((await readinessUntil(app, 200)).status).toBe('ok');
    proxy.freeze();
    try {
      const down = await readinessUntil(app, 503);
      expect(down.error?.redis?.message).toMatch(/did not answer within 500 ms on the pop connection \(queue ID pops\)$/);
    } finally {
      proxy.heal();
    }
    expect((await readinessUntil(app, 200)).status).toBe('ok');
  });
});
