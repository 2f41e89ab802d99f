/**
 * When to refill a shard's Redis list and which indexes a refill allocates. Pure functions.
 */

/** IDLE: a list is refilled once it holds no more than IDLE * step indexes. */
export const DEFAULT_IDLE_RATIO = 0.2;
/** RETRY_TIME: on-demand refill attempts for one request. */
export const RETRY_TIME = 2;

export function needsRefill(queueLength: number, step: number, idleRatio = DEFAULT_IDLE_RATIO): boolean {
  return queueLength <= idleRatio * step;
}

export interface SegmentPlan {
  /** First index handed out by this refill (inclusive). */
  from: bigint;
  /** Last index (inclusive); the new `max_id` of the row. */
  to: bigint;
}

/**
 * The segment after `currentMaxId`: at least one step, as many whole steps as needed to cover
 * `minWanted` indexes, never past `maxIndex`. `null` when the shard's space is used up.
 *
 * The one definition of the rule: the stored procedure `shardleaf_id_alloc_next` (migration
 * 1763770500000) repeats it in SQL and is tested against it case by case
 * (test/integration/queue-id/allocate-procedure.spec.ts); IdAllocRepository checks every
 * range the procedure returns against it.
 */
export function planSegment(currentMaxId: bigint, step: number, maxIndex: bigint, minWanted = 1): SegmentPlan | null {
  if (step < 1) {
    throw new RangeError(`step must be >= 1, got ${step}`);
  }
  if (currentMaxId >= maxIndex) {
    return null;
  }
  const steps = BigInt(Math.max(1, Math.ceil(minWanted / step)));
  const wanted = currentMaxId + steps * BigInt(step);
  const to = wanted < maxIndex ? wanted : maxIndex;
  const from = firstIndexAfter(currentMaxId);
  if (to < from) {
    return null;
  }
  return { from, to };
}

/** The first index a segment after `maxId` starts at (never below index 0). */
export function firstIndexAfter(maxId: bigint): bigint {
  return maxId + 1n > 0n ? maxId + 1n : 0n;
}

/** Indexes not yet allocated from the DB for this shard. */
export function unallocated(currentMaxId: bigint, maxIndex: bigint): bigint {
  return maxIndex > currentMaxId ? maxIndex - currentMaxId : 0n;
}
