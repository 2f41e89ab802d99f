import { ShardStateView, observationsOf, summariseApps } from '../../../src/metrics/core/app-queue-summary';

function shard(app: number, shard: number, queueLength: number | null, refillSize: number | null, unallocated: number | null): ShardStateView {
  return { app, shard, queueLength, refillSize, alloc: unallocated === null ? null : { maxId: 1000, maxIndex: 1000 + unallocated, unallocated } };
}

describe('summariseApps: the per-app queue gauges', () => {
  it('sums lengths and capacity, takes the largest refill size, and finds the lowest shard and the emptiest list', () => {
    const apps = summariseApps([
      shard(1, 0, 500, 1000, 9_000),
      shard(1, 1, 20, 4000, 8_000), // hot: refill size grown, list low, fewest IDs left
      shard(1, 2, 900, 1000, 9_000),
      shard(2, 0, 7, 10, 100),
    ]);
    expect(apps).toEqual([
      { app: 1, queueLength: 1420, refillSize: 4000, lowestFillRatio: 20 / 4000, remaining: 27_420n, lowestShard: 1, lowestRemaining: 8_020 },
      { app: 2, queueLength: 7, refillSize: 10, lowestFillRatio: 0.7, remaining: 107n, lowestShard: 0, lowestRemaining: 107 },
    ]);
  });

  it('leaves out what was not read: a failed LLEN, a shard not in the registry, no id_alloc row', () => {
    const [a] = summariseApps([shard(3, 0, null, 100, 50), shard(3, 1, 10, null, 60), shard(3, 2, 5, 100, null)]);
    // The failed LLEN counts 0 in the app's capacity (as the admin API), but never as the lowest shard.
    expect(a).toEqual({ app: 3, queueLength: 15, refillSize: 100, lowestFillRatio: 0.05, remaining: 120n, lowestShard: 1, lowestRemaining: 70 });
    expect(summariseApps([shard(4, 0, null, null, null)])).toEqual([
      { app: 4, queueLength: null, refillSize: null, lowestFillRatio: null, remaining: null, lowestShard: null, lowestRemaining: null },
    ]);
  });

  it("sums an app's remaining capacity exactly past 2^53", () => {
    const full = 2 ** 49 - 1;
    const [a] = summariseApps(Array.from({ length: 64 }, (_, i) => shard(5, i, i, 1000, full - i)));
    expect(a.remaining).toBe(64n * BigInt(full));
    expect(a.lowestRemaining).toBe(full);
    expect(a.lowestShard).toBe(0);
  });

  it('gives the forecast only shards whose row and length were both read', () => {
    const obs = observationsOf([shard(1, 0, 5, 10, 95), shard(1, 1, null, 10, 5), shard(1, 2, 3, 10, null)]);
    expect(obs).toEqual([{ app: 1, shard: 0, maxId: 1000, maxIndex: 1095, queueLength: 5, remaining: 100 }]);
  });
});
