import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { OwnRedisSentinel, OwnRedisServer } from '../../support/redis-server';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

describe('queue IDs through Redis Sentinel', () => {
  const suite = appSuite('rsentinel');
  let master: OwnRedisServer;
  let sentinel: OwnRedisSentinel;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    master = await OwnRedisServer.start();
    suite.defer(() => master.destroy());
    sentinel = await OwnRedisSentinel.start(master, 'shardleaf-test');
    suite.defer(() => sentinel.destroy());
    app = await suite.start({ REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: 'shardleaf-test' });
  });

  it('finds the master through the sentinel and keeps the lists there', async () => {
    expect((await request(app, 'GET', '/health/ready', { token: null })).status).toBe(200);
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 6, appName: 'sentinel', step: 100 } })).status).toBe(201);
    const res = await request(app, 'GET', '/api/id/6?gatePass=alice&count=10', { token: null });
    expect(res.status).toBe(200);
    expect(new Set(res.json<{ ids: string[] }>().ids).size).toBe(10);
    const direct = new Redis(master.port, '127.0.0.1');
    try {
      expect(await direct.llen(`${suite.env.keyPrefix}idList_6_0`)).toBe(90);
    } finally {
      direct.disconnect();
    }
  });
});
