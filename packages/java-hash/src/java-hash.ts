/**
 * The one implementation of the gatePass hash, shared by the server and @shardleaf/client: a
 * client computes the same shard the server would.
 */

/**
 * Java's `String.hashCode()`: s[0]*31^(n-1) + … + s[n-1] over UTF-16 code units, in 32-bit
 * two's-complement arithmetic. JS strings are UTF-16 too, so `charCodeAt` yields the same units
 * (a non-BMP character counts as its two surrogates, as in Java).
 */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) {
    h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  }
  return h;
}

/** Java's `Math.abs(int)`: `Math.abs(Integer.MIN_VALUE)` overflows and stays negative. */
export function javaIntAbs(x: number): number {
  return x === -2147483648 ? x : Math.abs(x);
}

/** Java's `%` on ints truncates toward zero like JS; normalise JS's `-0` to `0`. */
export function javaIntRem(a: number, b: number): number {
  const r = a % b;
  return r === 0 ? 0 : r;
}

/** Shards per queue app: `2 << 5` in Java (the reference service's MAX_GATE_PASS_VALUE). */
export const QUEUE_SHARD_COUNT = 64;

/** The shard a gatePass lands on, exactly as `Math.abs(gatePass.hashCode()) % 64` in Java. */
export function shardOf(gatePass: string): number {
  return javaIntRem(javaIntAbs(javaStringHashCode(gatePass)), QUEUE_SHARD_COUNT);
}
