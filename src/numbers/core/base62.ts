/** Base-62 digits in ASCII order: `0-9`, then `A-Z`, then `a-z` (so a fixed-width text sorts as its value). */
export const BASE62_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `n` in base 62, zero-padded (with '0') to `width` digits. Throws a RangeError when `n` is negative
 * or needs more than `width` digits: a number is never longer than its pattern says.
 */
export function toBase62(n: bigint, width: number): string {
  return digitsOf(n, width, 62n);
}

/** `n` in decimal, zero-padded to `width` digits; a RangeError when it does not fit. */
export function toDecimal(n: bigint, width: number): string {
  return digitsOf(n, width, 10n);
}

/** The bases of a sequence: decimal, upper-case base 36 (`0-9A-Z`) and base 62. */
export type SeqBase = 10 | 36 | 62;

/** `n` in `base` (its digits the first of BASE62_DIGITS), zero-padded to `width`; a RangeError when it does not fit. */
export function toBase(n: bigint, width: number, base: SeqBase): string {
  return digitsOf(n, width, BigInt(base));
}

function digitsOf(n: bigint, width: number, base: bigint): string {
  if (n < 0n) {
    throw new RangeError(`a sequence is never negative, got ${n}`);
  }
  let digits = '';
  let rest = n;
  do {
    digits = BASE62_DIGITS[Number(rest % base)] + digits;
    rest /= base;
  } while (rest > 0n);
  if (digits.length > width) {
    throw new RangeError(`sequence ${n} does not fit in ${width} base-${base} digits`);
  }
  return digits.padStart(width, '0');
}

/** The largest value of `width` digits in `base`: base^width - 1. */
export function largestOf(width: number, base: SeqBase): bigint {
  return BigInt(base) ** BigInt(width) - 1n;
}
