import { ExactSum } from './exact-sum';

/**
 * Capacity forecast of queue-ID shards: how long until a shard has no IDs left under
 * max_limit_id, at the rate its IDs were consumed over the last `windowMs`.
 *
 * The rate is measured, not guessed: from two observations of a shard (id_alloc max_id and the
 * Redis list's length, as every instance sees them), the IDs consumed in between are
 * `(max_id advance) − (list growth)`: everything allocated that is no longer queued was popped
 * by some instance (or dropped: a gap). So the rate covers all instances, not this one's traffic.
 * A segment in flight (committed, not yet pushed) shows as consumed until its push lands: noise
 * of at most one refill over the window.
 *
 * Observations come from a timer (never the request path). Per shard only a few anchors are
 * kept (one per `windowMs / slots`), so memory is bounded by shards × (slots + 2). Indexes and
 * counts are numbers (an index has 49 bits: exact), so an observation of 16,384 shards makes no
 * bigint; the sums per app are exact bigints (ExactSum).
 *
 * Framework-free; time is passed in by the caller.
 */
export interface ShardObservation {
  app: number;
  shard: number;
  maxId: number;
  /** The largest index the shard may hand out (from max_limit_id): a change restarts its history. */
  maxIndex: number;
  queueLength: number;
  /** Queued + unallocated (shardCapacity). */
  remaining: number;
}

export interface ShardForecast {
  app: number;
  shard: number;
  remaining: number;
  /** IDs consumed per second over the window (all instances). */
  idsPerSecond: number;
  /**
   * Seconds until the shard runs out at that rate: 0 when nothing is left, Infinity when nothing
   * was consumed over the window (it never runs out at the current rate).
   */
  secondsLeft: number;
}

export interface AppForecast {
  app: number;
  remaining: bigint;
  idsPerSecond: number;
  /** Seconds until the app's first shard runs out (requests on it then get QUEUE_EXHAUSTED). */
  secondsLeft: number;
  /** That shard. */
  firstShard: number;
}

interface Anchor {
  at: number;
  maxId: number;
  queueLength: number;
}

interface Series {
  maxIndex: number;
  anchors: Anchor[];
  latest: Anchor & { remaining: number };
}

export interface CapacityForecastOptions {
  /** How far back the rate looks (CAPACITY_FORECAST_WINDOW_MS). */
  windowMs: number;
  /** Anchors per window; also: a forecast needs history of at least windowMs / slots. */
  slots?: number;
}

export class CapacityForecast {
  private readonly series = new Map<number, Series>();
  private readonly windowMs: number;
  private readonly spacingMs: number;
  private lastAt = -Infinity;
  /**
   * The results of the last observation, computed on first use (a scrape asks for them once per
   * gauge, the dashboard once per view); read-only for callers, replaced by the next `observe`.
   */
  private shardsMemo: readonly ShardForecast[] | null = null;
  private appsMemo: readonly AppForecast[] | null = null;

  constructor(options: CapacityForecastOptions) {
    const slots = options.slots ?? 12;
    if (!(options.windowMs > 0) || !(slots >= 1)) {
      throw new RangeError('windowMs must be > 0 and slots >= 1');
    }
    this.windowMs = options.windowMs;
    this.spacingMs = options.windowMs / slots;
  }

  /**
   * One observation of the shards at time `at` (ms). A shard missing from it (its LLEN failed, or
   * the app was deleted) has no forecast until it is observed again, and its history is dropped
   * once a whole window passed without it. A shard whose max_limit_id changed its largest index,
   * or whose max_id went back (re-created by hand), restarts: the window would mix two different
   * spaces.
   */
  observe(shards: readonly ShardObservation[], at: number): void {
    this.lastAt = at;
    this.shardsMemo = null;
    this.appsMemo = null;
    for (const o of shards) {
      const key = o.app * 256 + o.shard;
      let s = this.series.get(key);
      if (s && (s.maxIndex !== o.maxIndex || o.maxId < s.latest.maxId || at < s.latest.at)) {
        s = undefined;
      }
      if (!s) {
        this.series.set(key, {
          maxIndex: o.maxIndex,
          anchors: [{ at, maxId: o.maxId, queueLength: o.queueLength }],
          latest: { at, maxId: o.maxId, queueLength: o.queueLength, remaining: o.remaining },
        });
        continue;
      }
      // The latest point is the series' own object (never an anchor): updated in place, so an
      // observation of 16,384 shards allocates only the anchors it adds.
      const latest = s.latest;
      latest.at = at;
      latest.maxId = o.maxId;
      latest.queueLength = o.queueLength;
      latest.remaining = o.remaining;
      if (at - s.anchors[s.anchors.length - 1].at >= this.spacingMs) {
        s.anchors.push({ at, maxId: o.maxId, queueLength: o.queueLength });
      }
      // Keep as base the newest anchor at or before the window's start.
      while (s.anchors.length > 1 && s.anchors[1].at <= at - this.windowMs) {
        s.anchors.shift();
      }
    }
    for (const [key, s] of this.series) {
      if (s.latest.at < at - this.windowMs) {
        this.series.delete(key);
      }
    }
  }

  /** Shards of the last observation with at least windowMs / slots of history, in (app, shard) order. */
  shards(): readonly ShardForecast[] {
    this.shardsMemo ??= this.computeShards();
    return this.shardsMemo;
  }

  /** Per app: the sums, and the shard that runs out first. */
  apps(): readonly AppForecast[] {
    this.appsMemo ??= this.computeApps();
    return this.appsMemo;
  }

  private computeShards(): ShardForecast[] {
    const out: ShardForecast[] = [];
    // Series are made in the observations' (app, shard) order; a sort only when one was re-made.
    let sorted = true;
    let lastKey = -1;
    for (const [key, s] of this.series) {
      if (s.latest.at !== this.lastAt) {
        continue;
      }
      const base = s.anchors[0];
      const spanMs = s.latest.at - base.at;
      if (spanMs < this.spacingMs || spanMs <= 0) {
        continue;
      }
      // Exact: an index is at most 2^49 - 1 and a list holds fewer entries than that.
      const consumed = Math.max(0, s.latest.maxId - base.maxId - (s.latest.queueLength - base.queueLength));
      const idsPerSecond = (consumed * 1000) / spanMs;
      const remaining = s.latest.remaining;
      const secondsLeft = remaining === 0 ? 0 : idsPerSecond > 0 ? remaining / idsPerSecond : Infinity;
      out.push({ app: Math.floor(key / 256), shard: key % 256, remaining, idsPerSecond, secondsLeft });
      sorted &&= key > lastKey;
      lastKey = key;
    }
    return sorted ? out : out.sort((a, b) => a.app - b.app || a.shard - b.shard);
  }

  private computeApps(): AppForecast[] {
    const out: AppForecast[] = [];
    let a: AppForecast | null = null;
    let remaining = new ExactSum();
    // Shards come in (app, shard) order: one app after the other.
    for (const f of this.shards()) {
      if (a === null || a.app !== f.app) {
        if (a !== null) {
          a.remaining = remaining.value();
        }
        a = { app: f.app, remaining: 0n, idsPerSecond: 0, secondsLeft: f.secondsLeft, firstShard: f.shard };
        remaining = new ExactSum();
        out.push(a);
      }
      remaining.add(f.remaining);
      a.idsPerSecond += f.idsPerSecond;
      if (f.secondsLeft < a.secondsLeft) {
        a.secondsLeft = f.secondsLeft;
        a.firstShard = f.shard;
      }
    }
    if (a !== null) {
      a.remaining = remaining.value();
    }
    return out;
  }
}
