import { ShardObservation } from './capacity-forecast';
import { ExactSum } from './exact-sum';

/**
 * One state read's shards by slot (the queue feature's ShardSlots): one typed array per field,
 * slot = app * slotsPerApp + shard, NaN where a value is not known.
 */
export interface ShardSlotsView {
  readonly slotsPerApp: number;
  /** 1: a shard of id_alloc or of this instance's registry. */
  readonly present: Uint8Array;
  /** NaN: its LLEN failed. */
  readonly queueLength: Float64Array;
  /** NaN: not in this instance's registry. */
  readonly refillSize: Float64Array;
  /** id_alloc's row as numbers (exact: indexes have 49 bits); NaN in all three: not read. */
  readonly maxId: Float64Array;
  readonly maxIndex: Float64Array;
  readonly unallocated: Float64Array;
}

/** What the per-app queue gauges show of one app. */
export interface AppQueueSummary {
  app: number;
  /** Indexes queued in the lists whose LLEN succeeded; null when none did. */
  queueLength: number | null;
  /** The largest next refill size of this instance over the app's shards; null when none is in its registry. */
  refillSize: number | null;
  /** The lowest queued ÷ refill size over the shards where both are known; null when none. */
  lowestFillRatio: number | null;
  /** IDs the app can still hand out (queued + unallocated, a failed LLEN counted as 0); null without id_alloc rows. Exact past 2^53. */
  remaining: bigint | null;
  /** The shard with the fewest IDs left (queued + unallocated, both known) and that number; null when none. */
  lowestShard: number | null;
  lowestRemaining: number | null;
}

/** One app shard's values (the per-shard families' rows); null where not known. */
export interface ShardRowView {
  app: number;
  shard: number;
  queueLength: number | null;
  refillSize: number | null;
  /** Queued + unallocated, when both are known. */
  remaining: number | null;
}

const known = (v: number): number | null => (Number.isNaN(v) ? null : v);

/** A slot's remaining capacity, when both its row and its length are known (below 2^53: exact). */
export function shardRemaining(s: ShardSlotsView, slot: number): number | null {
  return known(s.queueLength[slot] + s.unallocated[slot]);
}

/** Per-app summaries, in app order; pure. Ties for the lowest go to the lower shard. */
export function summariseApps(s: ShardSlotsView): AppQueueSummary[] {
  const out: AppQueueSummary[] = [];
  let a: AppQueueSummary | null = null;
  let remaining: ExactSum | null = null;
  for (let slot = 0; slot < s.present.length; slot++) {
    if (s.present[slot] !== 1) {
      continue;
    }
    const app = Math.floor(slot / s.slotsPerApp);
    if (a === null || a.app !== app) {
      if (a !== null && remaining !== null) {
        a.remaining = remaining.value();
      }
      a = { app, queueLength: null, refillSize: null, lowestFillRatio: null, remaining: null, lowestShard: null, lowestRemaining: null };
      remaining = null;
      out.push(a);
    }
    const length = known(s.queueLength[slot]);
    const refill = known(s.refillSize[slot]);
    if (length !== null) {
      a.queueLength = (a.queueLength ?? 0) + length;
    }
    if (refill !== null) {
      a.refillSize = Math.max(a.refillSize ?? 0, refill);
      if (length !== null && refill > 0) {
        const ratio = length / refill;
        a.lowestFillRatio = a.lowestFillRatio === null ? ratio : Math.min(a.lowestFillRatio, ratio);
      }
    }
    const unallocated = known(s.unallocated[slot]);
    if (unallocated !== null) {
      remaining ??= new ExactSum();
      remaining.add((length ?? 0) + unallocated);
      if (length !== null && (a.lowestRemaining === null || length + unallocated < a.lowestRemaining)) {
        a.lowestRemaining = length + unallocated;
        a.lowestShard = slot - app * s.slotsPerApp;
      }
    }
  }
  if (a !== null && remaining !== null) {
    a.remaining = remaining.value();
  }
  return out;
}

/** The capacity forecast's observations: shards whose row and length were both read, in (app, shard) order. */
export function observationsOf(s: ShardSlotsView): ShardObservation[] {
  const out: ShardObservation[] = [];
  for (let slot = 0; slot < s.present.length; slot++) {
    const length = s.queueLength[slot];
    const maxId = s.maxId[slot];
    if (s.present[slot] === 1 && !Number.isNaN(length) && !Number.isNaN(maxId)) {
      const app = Math.floor(slot / s.slotsPerApp);
      out.push({ app, shard: slot - app * s.slotsPerApp, maxId, maxIndex: s.maxIndex[slot], queueLength: length, remaining: length + s.unallocated[slot] });
    }
  }
  return out;
}

/** Every shard as a row object, in (app, shard) order: for the per-shard families (METRICS_PER_SHARD) only. */
export function shardRowsOf(s: ShardSlotsView): ShardRowView[] {
  const out: ShardRowView[] = [];
  for (let slot = 0; slot < s.present.length; slot++) {
    if (s.present[slot] === 1) {
      const app = Math.floor(slot / s.slotsPerApp);
      out.push({
        app,
        shard: slot - app * s.slotsPerApp,
        queueLength: known(s.queueLength[slot]),
        refillSize: known(s.refillSize[slot]),
        remaining: shardRemaining(s, slot),
      });
    }
  }
  return out;
}
