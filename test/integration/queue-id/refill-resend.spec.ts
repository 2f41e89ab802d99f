import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { REDIS, RedisClient } from '../../../src/infra/redis/redis.tokens';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { ShardRefill } from '../../../src/queue-id/refill/shard-refill';
import { CLAIM_LUA } from '../../../src/queue-id/redis/segment-push';
import { CommandMatcher, FaultProxy } from '../../support/fault-proxy';
import { OwnRedisServer } from '../../support/redis-server';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/**
 * Issue "Never twice", item 1: Redis executes a refill's push, its reply is lost and the connection
 * cut. The client must not send the push again after reconnecting (nor may a second run of it
 * push twice): the list never holds an index twice, nor more than max_id indexes.
 */
type Struck = 'claim' | 'EXEC';

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
    // The server knows the claim script, so a struck claim is one that ran (not a NOSCRIPT reply).
    await direct.script('LOAD', CLAIM_LUA);
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

  /**
   * The two steps of a push (segment-push.ts): the claim, a script whose first key is the list,
   * and the RPUSH of the claimed indexes, sent in a transaction with its limit guard (MULTI, RPUSH,
   * EVAL, EXEC: the EXEC runs it). Each is struck in turn: executed, reply lost, cut. Only this
   * refill talks to Redis meanwhile (no cron, no refill ahead), so the EXEC struck is its own.
   */
  const commandOf: Record<Struck, (list: string) => CommandMatcher> = {
    claim: (list) => (words) => ['EVAL', 'EVALSHA'].includes(words[0]) && words[3] === list,
    EXEC: () => (words) => words[0] === 'EXEC',
  };

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

  describe.each([
    ['claim', 41],
    ['EXEC', 42],
  ] as Array<[Struck, number]>)('the %s of a push ran, its reply was lost', (struckCommand, appId) => {
    it('the sweep refill: the list holds each index once (the claim lost: a gap; the RPUSH lost: once)', async () => {
      expect((await request(app, 'POST', '/admin/apps', { body: { appId, appName: `resend${appId}`, step: STEP } })).status).toBe(201);
      const struck = proxy.strikeOnce(commandOf[struckCommand](listKey(appId, 0)));
      const refill = app.get(ShardRefill);
      const outcome = await refill
        .refill({ appId: appId, shardId: 0 }, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 })
        .then((r) => r.status, (err: Error) => `failed: ${err.message}`);
      await struck;
      await expectNoIndexTwice(appId, 0, []);
      // A lost claim reply means no RPUSH (a gap of 1..STEP); a lost EXEC reply means the RPUSH ran once.
      const queued = (await direct.lrange(listKey(appId, 0), 0, -1)).map(Number);
      expect(queued).toEqual(struckCommand === 'claim' ? [] : Array.from({ length: STEP }, (_, i) => i + 1));
      expect(await direct.get(`{${listKey(appId, 0)}}:pushed`)).toBe(String(STEP));
      // The next refill goes on after the segment that was pushed (or lost): still no index twice.
      await refill.refill({ appId: appId, shardId: 0 }, { skipIfAtLeast: STEP * 10, minWanted: 1, lockRetries: 0 });
      await expectNoIndexTwice(appId, 0, []);
      expect(await direct.llen(listKey(appId, 0))).toBeGreaterThanOrEqual(STEP);
      expect(outcome).toMatch(/^failed: /);
    });

    it('the on-demand refill of a request: the rest of its segment is queued at most once', async () => {
      const gatePass = 'resend-user';
      const shard = shardOf(gatePass);
      const struck = proxy.strikeOnce(commandOf[struckCommand](listKey(appId, shard)));
      const first = await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}`, { token: null });
      await struck;
      const handedOut: bigint[] = [];
      if (first.status === 200) {
        handedOut.push(decomposeQueueId(BigInt(first.body)).index);
      }
      await expectNoIndexTwice(appId, shard, handedOut);
      // The service goes on serving, and nothing it hands out was handed out or queued before.
      for (let i = 0; i < 3; i++) {
        const res = await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}&count=50`, { token: null });
        expect(res.status).toBe(200);
        handedOut.push(...res.json<{ ids: string[] }>().ids.map((id) => decomposeQueueId(BigInt(id)).index));
      }
      await expectNoIndexTwice(appId, shard, handedOut);
    });
  });
});
