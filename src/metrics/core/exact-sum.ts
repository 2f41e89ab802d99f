const SPLIT = 2 ** 32;
const SPLIT_N = 2n ** 32n;

/**
 * A running sum of safe integers that stays exact past 2^53 (an app's remaining capacity: 64
 * shards of up to 2^49 IDs each), without a bigint per term: each term is split at 2^32 and the
 * parts summed as numbers (exact for up to 2^20 terms); `value()` joins them as a bigint. Pure.
 */
export class ExactSum {
  private high = 0;
  private low = 0;

  add(term: number): void {
    const high = Math.floor(term / SPLIT);
    this.high += high;
    this.low += term - high * SPLIT;
  }

  value(): bigint {
    return BigInt(this.high) * SPLIT_N + BigInt(this.low);
  }
}
