/** The IDs `[value, max)` of one fetch. Pure. */
export interface SegmentRange {
  value: bigint;
  max: bigint;
}

/**
 * Leaf's range rule: after a fetch moved `max_id` up by `step`, the caller owns
 * `max_id - step .. max_id - 1`. A fresh row `max_id = 1, step = 2000` gives 1..2000. IDs below 1
 * are never issued (a row created with `max_id < step` loses them as a gap).
 */
export function segmentRange(maxId: bigint, step: number): SegmentRange {
  const start = maxId - BigInt(step);
  return { value: start < 1n ? 1n : start, max: maxId };
}

/** One half of a double buffer: hands out `value`, `value + 1`, … while `value < max`. */
export class Segment {
  value = 0n;
  max = 0n;
  step = 0;

  /** IDs still to hand out. */
  get idle(): bigint {
    return this.max > this.value ? this.max - this.value : 0n;
  }

  fill(maxId: bigint, step: number): void {
    const range = segmentRange(maxId, step);
    this.value = range.value;
    this.max = range.max;
    this.step = step;
  }

  /** Moves up to `n` IDs into `out`; returns how many. */
  takeInto(out: bigint[], n: number): number {
    let taken = 0;
    while (taken < n && this.value < this.max) {
      out.push(this.value);
      this.value++;
      taken++;
    }
    return taken;
  }
}
