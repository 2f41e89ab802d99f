import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { REDIS, RedisClient } from '../../../src/infra/redis/redis.tokens';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { QueueRefillService } from '../../../src/queue-id/queue-refill.service';
import { FaultProxy } from '../../support/fault-proxy';
import { OwnRedisServer } from '../../support/redis-server';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/**
 * Issue "Never twice", item 1: Redis executes a refill's push, its reply is lost and the connection
 * cut. The client must not send the push again after reconnecting (nor may a second run of it
 * push twice): the list never holds an index twice, nor more than max_id indexes.
 */
describe('refill push whose reply is lost (no second copy)', () => {
  let env: TestEnv;
  let server: OwnRedisServer;
  let proxy: FaultProxy;
  let app: NestFastifyApplication;
  let direct: Redis;
  const STEP = 100;

  beforeAll(async () => {
    env = await createTestEnv('resend');
    server = await OwnRedisServer.start();
    proxy = await FaultProxy.start(server.port);
    direct = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    app = await startApp(env.config({ REDIS_URL: `redis://127.0.0.1:${proxy.port}/0` }));
  });

  afterAll(async () => {
    await app?.close();
    direct?.disconnect();
    await proxy?.close();
    await server?.destroy();
    await env?.cleanup();
  });

  const listKey = (appId: number, shard: number): string => `${env.keyPrefix}idList_${appId}_${shard}`;

  /** The push of `list`: an RPUSH to it, or a script (EVAL/EVALSHA) whose first key is it. */
  const pushTo =
    (list: string) =>
    (words: string[]): boolean =>
      (words[0] === 'RPUSH' && words[1] === list) || (['EVAL', 'EVALSHA'].includes(words[0]) && words[3] === list);

  async function maxId(appId: number, shard: number): Promise<bigint> {
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shard])) as Array<{
      max_id: string;
    }>;
    return BigInt(rows[0].max_id);
  }

  /** Every index handed out or queued for (appId, shard) is unique and within max_id. */
  async function expectNoIndexTwice(appId: number, shard: number, handedOut: bigint[]): Promise<void> {
    // A PING through the app's own client: anything it resends after the reconnect has run before.
    await app.get<RedisClient>(REDIS).ping();
    const queued = (await direct.lrange(listKey(appId, shard), 0, -1)).map(BigInt);
    const all = [...handedOut, ...queued];
    const seen = new Set(all.map(String));
    expect({ entries: all.length, distinct: seen.size }).toEqual({ entries: seen.size, distinct: seen.size });
    const top = await maxId(appId, shard);
    expect(all.every((i) => i >= 1n && i <= top)).toBe(true);
    expect(BigInt(queued.length)).toBeLessThanOrEqual(top);
  }

  it('the sweep refill: the push ran, its reply was lost; the list holds each index once', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 41, appName: 'resend', step: STEP } })).status).toBe(201);
    const struck = proxy.strikeOnce(pushTo(listKey(41, 0)));
    const refill = app.get(QueueRefillService);
    const outcome = await refill
      .refillShard(41, 0, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 })
      .then((r) => r.status, (err: Error) => `failed: ${err.message}`);
    await struck;
    await expectNoIndexTwice(41, 0, []);
    // The next refill goes on after the segment that was pushed (or lost): still no index twice.
    await refill.refillShard(41, 0, { skipIfAtLeast: STEP * 10, minWanted: 1, lockRetries: 0 });
    await expectNoIndexTwice(41, 0, []);
    expect(await direct.llen(listKey(41, 0))).toBeGreaterThanOrEqual(STEP);
    expect(typeof outcome).toBe('string');
  });

  it('the on-demand refill of a request: the rest of its segment is queued at most once', async () => {
    const gatePass = 'resend-user';
    const shard = shardOf(gatePass);
    const struck = proxy.strikeOnce(pushTo(listKey(41, shard)));
    const first = await request(app, 'GET', `/api/id/41?gatePass=${gatePass}`, { token: null });
    await struck;
    const handedOut: bigint[] = [];
    if (first.status === 200) {
      handedOut.push(decomposeQueueId(BigInt(first.body)).index);
    }
    await expectNoIndexTwice(41, shard, handedOut);
    // The service goes on serving, and nothing it hands out was handed out or queued before.
    for (let i = 0; i < 3; i++) {
      const res = await request(app, 'GET', `/api/id/41?gatePass=${gatePass}&count=50`, { token: null });
      expect(res.status).toBe(200);
      handedOut.push(...res.json<{ ids: string[] }>().ids.map((id) => decomposeQueueId(BigInt(id)).index));
    }
    await expectNoIndexTwice(41, shard, handedOut);
  });
});
