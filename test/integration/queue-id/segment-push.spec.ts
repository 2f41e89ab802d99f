import { createHash } from 'node:crypto';
import Redis, { Cluster } from 'ioredis';
import { readPushMarker } from '../../../src/queue-id/core/push-marker';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { CLAIM_LUA, PUSH_CHUNK, claimRange, pushClaimed, pushRange } from '../../../src/queue-id/redis/segment-push';
import { OwnRedisCluster, OwnRedisServer } from '../../support/redis-server';

/** The refill push (a claim script, then pre-encoded RPUSHes) against a Redis server of the test's own. */
describe('pushRange (claim, then push at most once)', () => {
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
    const sha = createHash('sha1').update(CLAIM_LUA).digest('hex');
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

  it('pushes a step above PUSH_CHUNK as several RPUSHes, every index once and in order, digits across 9→10', async () => {
    const from = 99_990n;
    const to = from + BigInt(PUSH_CHUNK) * 3n + 4n;
    expect(await pushRange(redis, list(2), mark(2), from, to)).toEqual({ pushed: Number(to - from + 1n) });
    const entries = await redis.lrange(list(2), 0, -1);
    expect(entries).toEqual(Array.from({ length: Number(to - from + 1n) }, (_, i) => (from + BigInt(i)).toString()));
    expect(await redis.get(mark(2))).toBe(to.toString());
    expect(await pushRange(redis, list(2), mark(2), from, to)).toMatchObject({ pushed: 0 });
    expect(await redis.llen(list(2))).toBe(entries.length);
  });

  it('claims a segment once: a second claim of it, or of an older one, is refused and changes nothing', async () => {
    expect(await claimRange(redis, list(4), mark(4), 1n, 100n)).toEqual({ claimed: true });
    expect(await redis.get(mark(4))).toBe('100');
    // A claim is all that was done: nothing queued until its holder pushes.
    expect(await redis.exists(list(4))).toBe(0);
    expect(await claimRange(redis, list(4), mark(4), 1n, 100n)).toEqual({ claimed: false, mark: 100n });
    expect(await claimRange(redis, list(4), mark(4), 50n, 150n)).toEqual({ claimed: false, mark: 100n });
    expect(await redis.get(mark(4))).toBe('100');
    expect(await pushClaimed(redis, list(4), 1n, 100n)).toBe(100);
    expect(await redis.lrange(list(4), 0, -1)).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    expect(await claimRange(redis, list(4), mark(4), 101n, 101n)).toEqual({ claimed: true });
  });

  it('refuses to claim a range it cannot write exactly', async () => {
    await expect(claimRange(redis, list(5), mark(5), 5n, 4n)).rejects.toThrow(RangeError);
    await expect(claimRange(redis, list(5), mark(5), -1n, 4n)).rejects.toThrow(RangeError);
    await expect(claimRange(redis, list(5), mark(5), 1n, 2n ** 53n)).rejects.toThrow(RangeError);
    expect(await redis.exists(mark(5))).toBe(0);
  });

  it.each(['garbage', '562949953421312', '1e3'])('refuses every push on a marker that is not an index (%s), changing nothing', async (raw) => {
    await redis.set(mark(3), raw);
    expect(await pushRange(redis, list(3), mark(3), 1n, 5n)).toEqual({ pushed: 0, invalidMark: raw });
    expect(await redis.exists(list(3))).toBe(0);
    expect(await redis.get(mark(3))).toBe(raw);
  });

  it('reads a marker exactly as core/push-marker.ts does: an index for one, "not an index" for the other', async () => {
    const raws = [
      '5',
      '-1',
      '0000000000000005', // 16 digits
      '-0000000000000005',
      '00000000000000005', // 17 digits: not an index for either
      '562949953421311', // the highest index
      '562949953421312',
      '9999999999999999',
      '1e3',
      '+5',
      ' 5',
      '5 ',
      '',
      '0x10',
    ];
    const verdicts: Array<{ raw: string; lua: boolean; ts: boolean }> = [];
    for (const raw of raws) {
      await redis.set(mark(9), raw);
      const claim = await claimRange(redis, list(9), mark(9), 562949953421311n, 562949953421311n);
      verdicts.push({ raw, lua: 'invalid' in claim, ts: readPushMarker(raw).kind === 'invalid' });
    }
    expect(verdicts.filter((v) => v.lua !== v.ts)).toEqual([]);
    expect(verdicts.find((v) => v.raw === '00000000000000005')).toMatchObject({ lua: true });
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

  /**
   * MOVED replies the masters sent so far (INFO errorstats): ioredis follows a MOVED silently, so a
   * command routed to the wrong node would still succeed; this counts the detours.
   */
  const movedReplies = async (): Promise<number> => {
    let total = 0;
    for (const node of client.nodes('master')) {
      total += Number(/errorstat_MOVED:count=(\d+)/.exec(await node.info('errorstats'))?.[1] ?? 0);
    }
    return total;
  };

  it.each(['plain.prefix.', '{tagged}.prefix.'])('prefix %s', async (prefix) => {
    const keys = new QueueKeys(prefix);
    const movedBefore = await movedReplies();
    for (let shard = 0; shard < 64; shard++) {
      expect(await pushRange(client, keys.list(7, shard), keys.pushMark(7, shard), 1n, 3n)).toEqual({ pushed: 3 });
      expect(await pushRange(client, keys.list(7, shard), keys.pushMark(7, shard), 1n, 3n)).toMatchObject({ pushed: 0 });
    }
    // The claim and the pre-encoded RPUSH went to each list's own node at the first try.
    expect(await movedReplies()).toBe(movedBefore);
    for (let shard = 0; shard < 64; shard++) {
      expect(await client.lrange(keys.list(7, shard), 0, -1)).toEqual(['1', '2', '3']);
    }
    const big = BigInt(PUSH_CHUNK) * 2n + 1n;
    expect(await pushRange(client, keys.list(7, 5), keys.pushMark(7, 5), 4n, 3n + big)).toEqual({ pushed: Number(big) });
    expect(await client.llen(keys.list(7, 5))).toBe(3 + Number(big));
    expect(await client.lindex(keys.list(7, 5), -1)).toBe((3n + big).toString());
  });
});
