/**
 * The adaptive refill size of a queue shard: Leaf's dynamic step applied to the Redis lists. Pure.
 * Sizes are whole multiples of the shard's step, so a refill of `size` IDs is ceil(size / step) =
 * size / step steps of one `max_id = max_id + n` row update (IdAllocRepository.allocate), cut at
 * max_limit_id by planSegment as any refill.
 */

export interface RefillSizeSettings {
  /** Target life of one refill, ms (Leaf's SEGMENT_DURATION, 15 min). */
  targetMs: number;
  /** Largest refill size in IDs; a shard whose step is larger still takes one step. */
  maxSize: number;
}

/** The largest size a shard may grow to: the largest whole number of steps within maxSize, at least one step. */
export function refillCeiling(step: number, maxSize: number): number {
  return Math.max(step, Math.floor(maxSize / step) * step);
}

/**
 * `size` as a valid size for `step` (the operator may have changed the step since): a whole
 * number of steps (rounded down), at least one step, at most the ceiling.
 */
export function normaliseSize(size: number, step: number, maxSize: number): number {
  const whole = Math.max(step, Math.floor(size / step) * step);
  return Math.min(whole, refillCeiling(step, maxSize));
}

/**
 * The size of the next refill, given the size of the previous one and how long it lasted (the
 * time from that refill to this one):
 * - used up faster than the target: twice as many, up to the ceiling;
 * - lasted more than twice the target: half, never below one step;
 * - otherwise: the same.
 */
export function nextRefillSize(previous: number, step: number, lastedMs: number, settings: RefillSizeSettings): number {
  if (step < 1) {
    throw new RangeError(`step must be >= 1, got ${step}`);
  }
  const current = normaliseSize(previous, step, settings.maxSize);
  if (lastedMs < settings.targetMs) {
    return Math.min(current * 2, refillCeiling(step, settings.maxSize));
  }
  if (lastedMs > 2 * settings.targetMs) {
    return normaliseSize(Math.floor(current / 2), step, settings.maxSize);
  }
  return current;
}
