import { ShardObservation } from './capacity-forecast';
import { ExactSum } from './exact-sum';

/** One app shard as the state read gives it (the queue feature's QueueShardState). */
export interface ShardStateView {
  app: number;
  shard: number;
  /** null: its LLEN failed. */
  queueLength: number | null;
  /** null: not in this instance's registry. */
  refillSize: number | null;
  /** Its id_alloc row as numbers (exact: indexes have 49 bits); null: not read. */
  alloc: { maxId: number; maxIndex: number; unallocated: number } | null;
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

/** A shard's remaining capacity, when both its row and its length are known (below 2^53: exact). */
export function shardRemaining(s: ShardStateView): number | null {
  return s.alloc === null || s.queueLength === null ? null : s.queueLength + s.alloc.unallocated;
}

/** Per-app summaries of shards in (app, shard) order; pure. Ties for the lowest go to the lower shard. */
export function summariseApps(shards: readonly ShardStateView[]): AppQueueSummary[] {
  const out: AppQueueSummary[] = [];
  let a: AppQueueSummary | null = null;
  let remaining: ExactSum | null = null;
  const close = (): void => {
    if (a !== null && remaining !== null) {
      a.remaining = remaining.value();
    }
  };
  for (const s of shards) {
    if (a === null || a.app !== s.app) {
      close();
      a = { app: s.app, queueLength: null, refillSize: null, lowestFillRatio: null, remaining: null, lowestShard: null, lowestRemaining: null };
      remaining = null;
      out.push(a);
    }
    if (s.queueLength !== null) {
      a.queueLength = (a.queueLength ?? 0) + s.queueLength;
    }
    if (s.refillSize !== null) {
      a.refillSize = Math.max(a.refillSize ?? 0, s.refillSize);
      if (s.queueLength !== null && s.refillSize > 0) {
        const ratio = s.queueLength / s.refillSize;
        a.lowestFillRatio = a.lowestFillRatio === null ? ratio : Math.min(a.lowestFillRatio, ratio);
      }
    }
    if (s.alloc !== null) {
      remaining ??= new ExactSum();
      remaining.add((s.queueLength ?? 0) + s.alloc.unallocated);
    }
    const left = shardRemaining(s);
    if (left !== null && (a.lowestRemaining === null || left < a.lowestRemaining)) {
      a.lowestRemaining = left;
      a.lowestShard = s.shard;
    }
  }
  close();
  return out;
}

/** The capacity forecast's observations: shards whose row and length were both read. */
export function observationsOf(shards: readonly ShardStateView[]): ShardObservation[] {
  const out: ShardObservation[] = [];
  for (const s of shards) {
    if (s.alloc !== null && s.queueLength !== null) {
      out.push({ app: s.app, shard: s.shard, maxId: s.alloc.maxId, maxIndex: s.alloc.maxIndex, queueLength: s.queueLength, remaining: s.queueLength + s.alloc.unallocated });
    }
  }
  return out;
}
