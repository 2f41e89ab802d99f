/** 2^53 - 1: the largest integer a JavaScript number holds exactly. */
export const MAX_SAFE_ID = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The ID as a `number`, exactly; throws a RangeError instead of rounding when it is above
 * 2^53 - 1 (a Leaf-layout snowflake ID, a segment or queue ID past that point). Keep IDs as
 * bigint or decimal strings when they may grow that far.
 */
export function toSafeNumber(id: bigint): number {
  if (id < 0n || id > MAX_SAFE_ID) {
    throw new RangeError(`ID ${id} is outside 0..2^53-1: a JavaScript number would lose its precision; use the bigint or string form`);
  }
  return Number(id);
}
