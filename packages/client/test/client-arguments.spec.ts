import { ShardleafClient } from '../src/client';
import { ShardleafArgumentError } from '../src/errors';
import { shardOf } from '../src/java-hash';
import { FakeClock, FakeServers } from './fakes';
import { A, testClient } from './test-client';

describe('ShardleafClient argument and option checks', () => {
  it('validates its arguments locally: every promise-returning method rejects, never throws', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock());
    const calls: Array<[string, () => Promise<unknown>, unknown]> = [
      ['queueId appId 256', () => c.queueId(256, 'a'), ShardleafArgumentError],
      ['queueId appId -1', () => c.queueId(-1, 'a'), ShardleafArgumentError],
      ['queueId appId 1.5', () => c.queueId(1.5, 'a'), ShardleafArgumentError],
      ['queueId gatePass ""', () => c.queueId(1, ''), ShardleafArgumentError],
      ['queueIdBatch n 0', () => c.queueIdBatch(1, 'a', 0), ShardleafArgumentError],
      ['queueIdBatch appId NaN', () => c.queueIdBatch(Number.NaN, 'a', 1), ShardleafArgumentError],
      ['queueIdString gatePass ""', () => c.queueIdString(1, ''), ShardleafArgumentError],
      ['segmentId tag ""', () => c.segmentId(''), ShardleafArgumentError],
      ['segmentIdBatch n 0', () => c.segmentIdBatch('orders', 0), ShardleafArgumentError],
      ['segmentIdBatch n 1.5', () => c.segmentIdBatch('orders', 1.5), ShardleafArgumentError],
      ['snowflakeId key ""', () => c.snowflakeId(''), ShardleafArgumentError],
      ['snowflakeIdBatch n -1', () => c.snowflakeIdBatch('default', -1), ShardleafArgumentError],
      ['number key ""', () => c.number(''), ShardleafArgumentError],
      ['numbers n 0', () => c.numbers('ORD', 0), ShardleafArgumentError],
    ];
    for (const [name, call, type] of calls) {
      let promise: Promise<unknown> | undefined;
      let thrown: unknown;
      try {
        promise = call();
      } catch (err) {
        thrown = err;
      }
      expect({ name, thrown }).toEqual({ name, thrown: undefined });
      await expect(promise).rejects.toBeInstanceOf(type as new () => Error);
    }
    expect(() => c.tryQueueId(256, 'a')).toThrow(ShardleafArgumentError);
    expect(() => c.trySegmentId('')).toThrow(ShardleafArgumentError);
    // The documented type, naming the argument; still a RangeError for code that caught those.
    const err = await c.queueId(999, 'a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardleafArgumentError);
    expect(err).toBeInstanceOf(RangeError);
    expect(err).toMatchObject({ name: 'ShardleafArgumentError', argument: 'appId', message: 'appId must be an integer 0..255, got 999' });
    expect(() => new ShardleafClient({ servers: A, prefetchAt: 2 })).toThrow(ShardleafArgumentError);
    expect(servers.calls).toHaveLength(0);
    await c.close();
  });

  it('checks appId before looking a buffer up: a fractional appId never reaches another app\'s buffer', async () => {
    // Buffer keys are appId * 64 + shard: appId 1.5 with a gatePass of shard s would be app 1's shard s + 32.
    const byShard = new Map<number, string>();
    for (let i = 0; byShard.size < 64; i++) {
      const g = `g${i}`;
      if (!byShard.has(shardOf(g))) {
        byShard.set(shardOf(g), g);
      }
    }
    const low = byShard.get(3) as string;
    const high = byShard.get(35) as string;
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { servers: A });
    const own = await c.queueId(1, high);
    expect(own & 0x3fffn).toBe(BigInt((35 << 8) | 1));
    await expect(c.queueId(1.5, low)).rejects.toBeInstanceOf(RangeError);
    await expect(c.queueIdBatch(1.5, low, 2)).rejects.toBeInstanceOf(RangeError);
    expect(() => c.tryQueueId(1.5, low)).toThrow(RangeError);
    // App 1's buffer lost nothing to those calls.
    expect(await c.queueId(1, high)).toBe(own + (1n << 14n));
    await c.close();
  });

  it.each([
    ['maxLease above the server\'s 10,000,000', { maxLease: 10_000_001 }, /maxLease/],
    ['initialLease above 10,000,000', { initialLease: 20_000_000 }, /initialLease/],
    ['minLease above maxLease', { minLease: 500, maxLease: 100 }, /minLease/],
    ['minLease 0', { minLease: 0 }, /minLease/],
    ['maxLease fractional', { maxLease: 10.5 }, /maxLease/],
    ['prefetchAt 0', { prefetchAt: 0 }, /prefetchAt/],
    ['prefetchAt 1.5', { prefetchAt: 1.5 }, /prefetchAt/],
    ['prefetchAt NaN', { prefetchAt: Number.NaN }, /prefetchAt/],
    ['timeoutMs 0', { timeoutMs: 0 }, /timeoutMs/],
    ['targetLeaseMs negative', { targetLeaseMs: -1 }, /targetLeaseMs/],
    ['backoffMaxMs Infinity', { backoffMaxMs: Number.POSITIVE_INFINITY }, /backoffMaxMs/],
    ['snowflakeBatch above 1000', { snowflakeBatch: 5000 }, /snowflakeBatch/],
    ['leaseTtlMs 0', { leaseTtlMs: 0 }, /leaseTtlMs/],
  ])('refuses the option %s, naming it', (_name, over, message) => {
    expect(() => new ShardleafClient({ servers: A, ...over })).toThrow(message);
  });

  it('accepts the largest lease the server allows', () => {
    expect(() => new ShardleafClient({ servers: A, maxLease: 10_000_000, initialLease: 10_000_000 })).not.toThrow();
    expect(() => new ShardleafClient({ servers: [] })).toThrow(RangeError);
  });
});
