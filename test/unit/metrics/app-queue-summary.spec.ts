import { ShardSlotsView, observationsOf, shardRowsOf, summariseApps } from '../../../src/metrics/core/app-queue-summary';

interface Shard {
  app: number;
  shard: number;
  queueLength: number | null;
  refillSize: number | null;
  /** null: no id_alloc row read (max_id 1000 otherwise). */
  unallocated: number | null;
}

function shard(app: number, shard: number, queueLength: number | null, refillSize: number | null, unallocated: number | null): Shard {
  return { app, shard, queueLength, refillSize, unallocated };
}

/** The state read's slots holding `shards` (64 slots per app, as the queue's layout). */
function slotsOf(shards: readonly Shard[]): ShardSlotsView {
  const size = 256 * 64;
  const column = () => new Float64Array(size).fill(Number.NaN);
  const s = { slotsPerApp: 64, present: new Uint8Array(size), queueLength: column(), refillSize: column(), maxId: column(), maxIndex: column(), unallocated: column() };
  for (const x of shards) {
    const slot = x.app * 64 + x.shard;
    s.present[slot] = 1;
    s.queueLength[slot] = x.queueLength ?? Number.NaN;
    s.refillSize[slot] = x.refillSize ?? Number.NaN;
    if (x.unallocated !== null) {
      s.maxId[slot] = 1000;
      s.maxIndex[slot] = 1000 + x.unallocated;
      s.unallocated[slot] = x.unallocated;
    }
  }
  return s;
}

describe('summariseApps: the per-app queue gauges', () => {
  it('sums lengths and capacity, takes the largest refill size, and finds the lowest shard and the emptiest list', () => {
    const apps = summariseApps(slotsOf([
      shard(1, 0, 500, 1000, 9_000),
      shard(1, 1, 20, 4000, 8_000), // hot: refill size grown, list low, fewest IDs left
      shard(1, 2, 900, 1000, 9_000),
      shard(2, 0, 7, 10, 100),
    ]));
    expect(apps).toEqual([
      { app: 1, queueLength: 1420, refillSize: 4000, lowestFillRatio: 20 / 4000, remaining: 27_420n, lowestShard: 1, lowestRemaining: 8_020 },
      { app: 2, queueLength: 7, refillSize: 10, lowestFillRatio: 0.7, remaining: 107n, lowestShard: 0, lowestRemaining: 107 },
    ]);
  });

  it('leaves out what was not read: a failed LLEN, a shard not in the registry, no id_alloc row', () => {
    const [a] = summariseApps(slotsOf([shard(3, 0, null, 100, 50), shard(3, 1, 10, null, 60), shard(3, 2, 5, 100, null)]));
    // The failed LLEN counts 0 in the app's capacity (as the admin API), but never as the lowest shard.
    expect(a).toEqual({ app: 3, queueLength: 15, refillSize: 100, lowestFillRatio: 0.05, remaining: 120n, lowestShard: 1, lowestRemaining: 70 });
    expect(summariseApps(slotsOf([shard(4, 0, null, null, null)]))).toEqual([
      { app: 4, queueLength: null, refillSize: null, lowestFillRatio: null, remaining: null, lowestShard: null, lowestRemaining: null },
    ]);
  });

  it("sums an app's remaining capacity exactly past 2^53", () => {
    const full = 2 ** 49 - 1;
    const [a] = summariseApps(slotsOf(Array.from({ length: 64 }, (_, i) => shard(5, i, i, 1000, full - i))));
    expect(a.remaining).toBe(64n * BigInt(full));
    expect(a.lowestRemaining).toBe(full);
    expect(a.lowestShard).toBe(0);
  });

  it('gives the forecast only shards whose row and length were both read', () => {
    const obs = observationsOf(slotsOf([shard(1, 0, 5, 10, 95), shard(1, 1, null, 10, 5), shard(1, 2, 3, 10, null)]));
    expect(obs).toEqual([{ app: 1, shard: 0, maxId: 1000, maxIndex: 1095, queueLength: 5, remaining: 100 }]);
  });

  it('gives the per-shard families one row per shard, in (app, shard) order, null where not known', () => {
    const rows = shardRowsOf(slotsOf([shard(2, 1, 5, null, 95), shard(1, 63, null, 10, 5), shard(2, 0, 3, 10, null)]));
    expect(rows).toEqual([
      { app: 1, shard: 63, queueLength: null, refillSize: 10, remaining: null },
      { app: 2, shard: 0, queueLength: 3, refillSize: 10, remaining: null },
      { app: 2, shard: 1, queueLength: 5, refillSize: null, remaining: 100 },
    ]);
  });
});
