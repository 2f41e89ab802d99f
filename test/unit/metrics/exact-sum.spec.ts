import { ExactSum } from '../../../src/metrics/core/exact-sum';

describe('ExactSum', () => {
  it('is 0n with no term', () => {
    expect(new ExactSum().value()).toBe(0n);
  });

  it('sums safe integers exactly where a number sum rounds', () => {
    const terms = [2 ** 53 - 1, 2 ** 53 - 1, 1, 2 ** 49 - 1, 0, 4_294_967_296, 4_294_967_295, 12_345];
    const sum = new ExactSum();
    let expected = 0n;
    for (const t of terms) {
      sum.add(t);
      expected += BigInt(t);
    }
    expect(sum.value()).toBe(expected);
    expect(Number.isSafeInteger(terms.reduce((a, b) => a + b, 0))).toBe(false);
  });

  it('keeps 256 × 64 terms of 2^49 − 1 exact', () => {
    const sum = new ExactSum();
    for (let i = 0; i < 256 * 64; i++) {
      sum.add(2 ** 49 - 1 - i);
    }
    const n = 256n * 64n;
    expect(sum.value()).toBe(n * (2n ** 49n - 1n) - (n * (n - 1n)) / 2n);
  });
});
