import { CapacityForecast, ShardObservation } from '../../../src/metrics/core/capacity-forecast';

/** A fake shard: the test moves max_id and the list length as refills and pops would. */
function shard(app: number, shardId: number, maxId: number, queueLength: number, limitIndex = 1_000_000): ShardObservation {
  return { app, shard: shardId, maxId, maxIndex: limitIndex, queueLength, remaining: limitIndex - maxId + queueLength };
}

describe('CapacityForecast', () => {
  let now: number;
  beforeEach(() => {
    now = 1_000_000;
  });
  const MIN = 60_000;

  it('gives nothing until a twelfth of the window has passed, then the rate over the window', () => {
    const f = new CapacityForecast({ windowMs: 60 * MIN });
    f.observe([shard(1, 0, 1000, 1000)], now);
    now += 4 * MIN;
    f.observe([shard(1, 0, 1000, 700)], now);
    expect(f.shards()).toEqual([]);
    now += MIN;
    // 5 min: a refill of 1000 on top of the 1000 queued, 200 left: 1800 popped.
    f.observe([shard(1, 0, 2000, 200)], now);
    const [s] = f.shards();
    expect(s.idsPerSecond).toBeCloseTo(1800 / 300);
    // 1,000,000 − 2000 unallocated + 200 queued.
    expect(s.remaining).toBe(998_200);
    expect(s.secondsLeft).toBeCloseTo(998_200 / (1800 / 300));
  });

  it('measures consumption from max_id and list length, not from refills alone', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 2 });
    f.observe([shard(2, 5, 0, 0)], now);
    now += 5 * MIN;
    // A refill pushed 5000 and nothing was popped: nothing consumed.
    f.observe([shard(2, 5, 5000, 5000)], now);
    expect(f.shards()[0].idsPerSecond).toBe(0);
    expect(f.shards()[0].secondsLeft).toBe(Infinity);
  });

  it('slides: the rate forgets traffic older than the window', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 10 });
    let maxId = 0;
    const len = 0;
    // 10 minutes at 10 IDs/s (one sample a minute), then 20 minutes idle.
    for (let m = 0; m <= 30; m++) {
      if (m > 0 && m <= 10) {
        maxId += 600;
      }
      f.observe([shard(1, 1, maxId, len)], now + m * MIN);
    }
    expect(f.shards()[0].idsPerSecond).toBe(0);
    // 10 more minutes at 2 IDs/s: the window holds only them.
    for (let m = 31; m <= 40; m++) {
      maxId += 120;
      f.observe([shard(1, 1, maxId, len)], now + m * MIN);
    }
    expect(f.shards()[0].idsPerSecond).toBeCloseTo(2);
  });

  it('keeps a bounded number of anchors however often it is fed', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 5 });
    for (let i = 0; i < 10_000; i++) {
      f.observe([shard(1, 1, i, 0)], now + i * 1000);
    }
    const series = (f as unknown as { series: Map<number, { anchors: unknown[] }> }).series;
    expect(series.get(256 + 1)?.anchors.length).toBeLessThanOrEqual(7);
    expect(f.shards()[0].idsPerSecond).toBeCloseTo(1);
  });

  it('says 0 seconds for an exhausted shard and restarts a shard whose limit changed', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 1 });
    f.observe([shard(3, 0, 999_000, 1000, 1_000_000)], now);
    now += 10 * MIN;
    f.observe([shard(3, 0, 1_000_000, 0, 1_000_000)], now);
    expect(f.shards()[0].secondsLeft).toBe(0);
    now += MIN;
    // max_limit_id raised: the old window mixes two spaces, so the shard has no forecast yet.
    f.observe([shard(3, 0, 1_000_000, 0, 2_000_000)], now);
    expect(f.shards()).toEqual([]);
  });

  it("shows only shards of the last observation, keeps a missed shard's history for a window, then forgets it", () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 1 });
    f.observe([shard(1, 0, 100, 0), shard(1, 1, 100, 0)], now);
    now += 10 * MIN;
    f.observe([shard(1, 0, 700, 0), shard(1, 1, 100, 0)], now);
    // Shard 1's LLEN failed once: no forecast for it now, its history stays.
    now += MIN;
    f.observe([shard(1, 0, 760, 0)], now);
    expect(f.shards().map((s) => s.shard)).toEqual([0]);
    now += MIN;
    f.observe([shard(1, 0, 820, 0), shard(1, 1, 220, 0)], now);
    expect(f.shards().map((s) => s.shard)).toEqual([0, 1]);
    expect(f.shards()[1].idsPerSecond).toBeCloseTo(120 / 720);
    // Gone for a whole window (deleted): forgotten.
    now += 11 * MIN;
    f.observe([shard(1, 0, 880, 0)], now);
    const series = (f as unknown as { series: Map<number, unknown> }).series;
    expect(series.has(256 + 1)).toBe(false);
  });

  it('restarts a shard whose max_id went back', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 1 });
    f.observe([shard(1, 0, 100, 0)], now);
    now += 10 * MIN;
    f.observe([shard(1, 0, 700, 0)], now);
    expect(f.shards()).toHaveLength(1);
    now += MIN;
    f.observe([shard(1, 0, 50, 0)], now);
    expect(f.shards()).toEqual([]);
  });

  it('per app: sums remaining and rate, and names the shard that runs out first', () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 1 });
    f.observe([shard(7, 0, 0, 0), shard(7, 1, 0, 0), shard(8, 0, 0, 0)], now);
    now += 10 * MIN;
    // Shard 1 of app 7 is hot (one user hammering): 6000 IDs in 10 min against 600 on shard 0.
    f.observe([shard(7, 0, 600, 0), shard(7, 1, 6000, 0), shard(8, 0, 0, 0)], now);
    const [a7, a8] = f.apps();
    expect(a7.app).toBe(7);
    expect(a7.idsPerSecond).toBeCloseTo(11);
    expect(a7.remaining).toBe(2_000_000n - 6600n);
    expect(a7.firstShard).toBe(1);
    expect(a7.secondsLeft).toBeCloseTo((1_000_000 - 6000) / 10);
    expect(a8).toMatchObject({ app: 8, idsPerSecond: 0, secondsLeft: Infinity });
  });

  it("sums an app's remaining capacity exactly past 2^53 (64 shards of the 49-bit range)", () => {
    const f = new CapacityForecast({ windowMs: 10 * MIN, slots: 1 });
    const full = 2 ** 49 - 1;
    const shards = (maxId: number) => Array.from({ length: 64 }, (_, i) => shard(9, i, maxId + i, 3, full));
    f.observe(shards(1), now);
    now += 10 * MIN;
    f.observe(shards(601), now);
    const [a9] = f.apps();
    // Each shard: full − (601 + i) + 3 left; 600 consumed in 600 s.
    expect(a9.remaining).toBe(64n * BigInt(full) - 64n * 598n - 2016n);
    expect(a9.idsPerSecond).toBeCloseTo(64);
    expect(f.shards()[5].remaining).toBe(full - 606 + 3);
  });

  it('refuses a bad window', () => {
    expect(() => new CapacityForecast({ windowMs: 0 })).toThrow(RangeError);
  });

  it('answers reads between observations alike, and the next observation replaces the answer', () => {
    const f = new CapacityForecast({ windowMs: 60 * MIN });
    f.observe([shard(1, 0, 1000, 1000), shard(1, 1, 1000, 1000)], now);
    now += 5 * MIN;
    f.observe([shard(1, 0, 2000, 400), shard(1, 1, 1000, 1000)], now);
    const first = f.apps();
    expect(f.apps()).toEqual(first);
    expect(first).toEqual([expect.objectContaining({ app: 1, firstShard: 0, idsPerSecond: 1600 / 300 })]);
    now += 5 * MIN;
    // Shard 1 is drained faster than shard 0 now; shard 0's latest point moved, its base did not.
    f.observe([shard(1, 0, 2000, 300), shard(1, 1, 3000, 0)], now);
    const [app] = f.apps();
    expect(app.idsPerSecond).toBeCloseTo(1700 / 600 + 3000 / 600);
    expect(f.shards().map((s) => s.remaining)).toEqual([1_000_000 - 2000 + 300, 1_000_000 - 3000]);
  });
});
