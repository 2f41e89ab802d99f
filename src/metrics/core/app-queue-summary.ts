import { ShardObservation } from './capacity-forecast';

/** One app shard as the state read gives it (the queue feature's QueueShardState). */
export interface ShardStateView {
  app: number;
  shard: number;
  /** null: its LLEN failed. */
  queueLength: number | null;
  /** null: not in this instance's registry. */
  refillSize: number | null;
  /** null: its id_alloc row was not read. */
  alloc: { maxId: bigint; maxLimitId: bigint; unallocated: bigint } | null;
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
  /** IDs the app can still hand out (queued + unallocated, a failed LLEN counted as 0); null without id_alloc rows. */
  remaining: bigint | null;
  /** The shard with the fewest IDs left (queued + unallocated, both known) and that number; null when none. */
  lowestShard: number | null;
  lowestRemaining: bigint | null;
}

/** A shard's remaining capacity, when both its row and its length are known. */
export function shardRemaining(s: ShardStateView): bigint | null {
  return s.alloc === null || s.queueLength === null ? null : BigInt(s.queueLength) + s.alloc.unallocated;
}

/** Per-app summaries of shards in (app, shard) order; pure. Ties for the lowest go to the lower shard. */
export function summariseApps(shards: readonly ShardStateView[]): AppQueueSummary[] {
  const out: AppQueueSummary[] = [];
  let a: AppQueueSummary | null = null;
  for (const s of shards) {
    if (a === null || a.app !== s.app) {
      a = { app: s.app, queueLength: null, refillSize: null, lowestFillRatio: null, remaining: null, lowestShard: null, lowestRemaining: null };
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
      a.remaining = (a.remaining ?? 0n) + BigInt(s.queueLength ?? 0) + s.alloc.unallocated;
    }
    const left = shardRemaining(s);
    if (left !== null && (a.lowestRemaining === null || left < a.lowestRemaining)) {
      a.lowestRemaining = left;
      a.lowestShard = s.shard;
    }
  }
  return out;
}

/** The capacity forecast's observations: shards whose row and length were both read. */
export function observationsOf(shards: readonly ShardStateView[]): ShardObservation[] {
  const out: ShardObservation[] = [];
  for (const s of shards) {
    const remaining = shardRemaining(s);
    if (remaining !== null && s.alloc !== null && s.queueLength !== null) {
      out.push({ app: s.app, shard: s.shard, maxId: s.alloc.maxId, maxLimitId: s.alloc.maxLimitId, queueLength: s.queueLength, remaining });
    }
  }
  return out;
}
