import { createHash } from 'node:crypto';
import Redis, { Cluster } from 'ioredis';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { MAX_PER_RUN, PUSH_RANGE_LUA, pushRange } from '../../../src/queue-id/segment-push';
import { OwnRedisCluster, OwnRedisServer } from '../../support/redis-server';

/** The idempotent refill push (Lua) against a Redis server of the test's own. */
describe('pushRange (idempotent refill push)', () => {
  let server: OwnRedisServer;
  let redis: Redis;
  const keys = new QueueKeys('push.test.');

  beforeAll(async () => {
    server = await OwnRedisServer.start();
    redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.destroy();
  });

  const list = (shard: number): string => keys.list(1, shard);
  const mark = (shard: number): string => keys.pushMark(1, shard);

  it('pushes from..to in order on a fresh server (EVALSHA answered NOSCRIPT, then EVAL) and sets the marker', async () => {
    const sha = createHash('sha1').update(PUSH_RANGE_LUA).digest('hex');
    expect(await redis.script('EXISTS', sha)).toEqual([0]);
    expect(await pushRange(redis, list(0), mark(0), 1n, 2500n)).toEqual({ pushed: 2500 });
    expect(await redis.script('EXISTS', sha)).toEqual([1]);
    const entries = await redis.lrange(list(0), 0, -1);
    expect(entries).toEqual(Array.from({ length: 2500 }, (_, i) => String(i + 1)));
    expect(await redis.get(mark(0))).toBe('2500');
  });

  it('refuses a second run of the same push and any older segment: nothing is pushed twice', async () => {
    expect(await pushRange(redis, list(0), mark(0), 1n, 2500n)).toEqual({ pushed: 0, refusedAt: { from: 1n, mark: 2500n } });
    expect(await pushRange(redis, list(0), mark(0), 2500n, 2600n)).toMatchObject({ pushed: 0 });
    expect(await redis.llen(list(0))).toBe(2500);
    expect(await pushRange(redis, list(0), mark(0), 2501n, 2510n)).toEqual({ pushed: 10 });
    expect(await redis.get(mark(0))).toBe('2510');
  });

  it('writes large indexes as exact decimal digits (never 1e+14)', async () => {
    const top = 2n ** 49n - 1n;
    expect(await pushRange(redis, list(1), mark(1), top - 2n, top)).toEqual({ pushed: 3 });
    expect(await redis.lrange(list(1), 0, -1)).toEqual([top - 2n, top - 1n, top].map(String));
    expect(await redis.get(mark(1))).toBe(top.toString());
  });

  it('splits a step above MAX_PER_RUN into several runs, each idempotent', async () => {
    const to = MAX_PER_RUN * 3n + 5n;
    expect(await pushRange(redis, list(2), mark(2), 1n, to)).toEqual({ pushed: Number(to) });
    expect(await redis.llen(list(2))).toBe(Number(to));
    expect(await redis.lindex(list(2), -1)).toBe(to.toString());
    expect(await redis.lindex(list(2), Number(MAX_PER_RUN))).toBe((MAX_PER_RUN + 1n).toString());
  });

  it('fails loudly on a marker that is not a number', async () => {
    await redis.set(mark(3), 'garbage');
    await expect(pushRange(redis, list(3), mark(3), 1n, 5n)).rejects.toThrow(/not a number/);
    expect(await redis.exists(list(3))).toBe(0);
  });
});

describe('pushRange on a Redis Cluster: list and marker share a slot', () => {
  let cluster: OwnRedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await OwnRedisCluster.start(3);
    client = new Cluster(cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
  });

  afterAll(async () => {
    client?.disconnect();
    await cluster?.destroy();
  });

  it.each(['plain.prefix.', '{tagged}.prefix.'])('prefix %s', async (prefix) => {
    const keys = new QueueKeys(prefix);
    for (let shard = 0; shard < 64; shard++) {
      expect(await pushRange(client, keys.list(7, shard), keys.pushMark(7, shard), 1n, 3n)).toEqual({ pushed: 3 });
    }
    expect(await client.llen(keys.list(7, 63))).toBe(3);
  });
});
