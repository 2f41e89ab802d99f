import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { OwnRedisSentinel, OwnRedisServer } from '../../support/redis-server';
import { startService } from '../../../src/start-service';
import { appSuite } from '../../support/app-suite';
import { freePort } from '../../support/free-port';
import { captureLog } from '../../support/log-capture';
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

  it.each([
    ['no sentinel answers', async () => `127.0.0.1:${await freePort()}`, 'shardleaf-test', /has no sentinel that answers/],
    ['the sentinels know no such master', async () => `127.0.0.1:${sentinel.port}`, 'no-such-master', /knows no master of that name \(REDIS_SENTINEL_NAME\)/],
  ])('refuses the start in one line naming REDIS_SENTINELS when %s', async (_, sentinels, name, words) => {
    const address = await sentinels();
    const { lines, stream } = captureLog();
    // ioredis disconnects the client of a sentinel that refused the connection (SentinelConnector
    // resolve()), arming its 2 s timer for a socket already gone: the suite waits it out at its end.
    const refusedAt = Date.now();
    suite.defer(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedAt + 2100 - Date.now()))));
    await expect(startService(suite.env.config({ LOG_LEVEL: 'log', REDIS_SENTINELS: address, REDIS_SENTINEL_NAME: name }), { logDestination: stream })).rejects.toThrow();
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      expect.stringMatching(new RegExp(`^error Redis Sentinel at REDIS_SENTINELS \\(${address}, master '${name}'\\) .+: not starting`)),
    ]);
    expect(lines[0].msg).toMatch(words);
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

  it('starts the service through the sentinel: the start check passes, and the start line names the Sentinel', async () => {
    const { lines, stream } = captureLog();
    const config = suite.env.config({ LOG_LEVEL: 'log', REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: 'shardleaf-test' });
    const started = await startService(config, { logDestination: stream });
    suite.defer(() => started.close());
    expect(lines.filter((l) => l.msg.startsWith('listening on')).map((l) => l.msg)).toEqual([
      expect.stringContaining(`Redis sentinel 127.0.0.1:${sentinel.port}, master 'shardleaf-test';`),
    ]);
  });
});
