import { IdGenError } from '../../../src/common/id-gen.error';
import { toBase62 } from '../../../src/numbers/core/base62';
import { checkPatternForReset, formatNumber, parsePattern, patternsOverlap } from '../../../src/numbers/core/number-pattern';
import { segmentSize } from '../../../src/numbers/core/number-store';
import { dateFields, parseDbTime } from '../../../src/numbers/core/period';

const fields = dateFields(parseDbTime('2026-11-26 09:30:00'));

function refused(source: unknown): string {
  try {
    parsePattern(source);
  } catch (err) {
    expect(err).toBeInstanceOf(IdGenError);
    return (err as Error).message;
  }
  throw new Error(`${String(source)} was accepted`);
}

describe('number patterns', () => {
  it('ORD{yyyyMMdd}{seq:6}: literal, date, a zero-padded sequence of 6 digits', () => {
    const p = parsePattern('ORD{yyyyMMdd}{seq:6}');
    expect(p.capacity).toBe(999_999n);
    expect(p.length).toBe(17);
    expect(formatNumber(p, fields, 1n)).toBe('ORD20261126000001');
    expect(formatNumber(p, fields, 42n)).toBe('ORD20261126000042');
    expect(formatNumber(p, fields, 999_999n)).toBe('ORD20261126999999');
  });

  it('every date part, separators, and a base-62 sequence', () => {
    const p = parsePattern('INV-{yy}/{MM}-{dd}.{HH}#{seq62:3}');
    expect(p.capacity).toBe(62n ** 3n - 1n);
    expect(formatNumber(p, fields, 1n)).toBe('INV-26/11-26.09#001');
    expect(formatNumber(p, fields, 61n)).toBe('INV-26/11-26.09#00z');
    expect(formatNumber(p, fields, 62n)).toBe('INV-26/11-26.09#010');
    expect(formatNumber(p, fields, p.capacity)).toBe('INV-26/11-26.09#zzz');
  });

  it('never a longer number and never a wrap: a sequence outside 1..capacity is refused', () => {
    const p = parsePattern('A{seq:2}');
    expect(formatNumber(p, fields, 99n)).toBe('A99');
    expect(() => formatNumber(p, fields, 100n)).toThrow(RangeError);
    expect(() => formatNumber(p, fields, 0n)).toThrow(RangeError);
    expect(() => toBase62(62n ** 2n, 2)).toThrow(RangeError);
  });

  it('{seq36:N}: upper-case base 36 (0-9A-Z), for consumers that compare text case-insensitively', () => {
    const p = parsePattern('T{seq36:3}');
    expect(p.capacity).toBe(36n ** 3n - 1n);
    expect(formatNumber(p, fields, 35n)).toBe('T00Z');
    expect(formatNumber(p, fields, 36n)).toBe('T010');
    expect(formatNumber(p, fields, p.capacity)).toBe('TZZZ');
    expect(parsePattern('{seq36:12}').capacity < 2n ** 63n).toBe(true);
    expect(refused('{seq36:13}')).toMatch(/1\.\.12/);
  });

  it('a width with a leading zero is read and stored as written without it: {seq:06} is {seq:6}', () => {
    expect(parsePattern('ORD{yyyyMMdd}{seq:06}').source).toBe('ORD{yyyyMMdd}{seq:6}');
    expect(parsePattern('X{seq62:03}').source).toBe('X{seq62:3}');
    expect(parsePattern('INV-{yy}/{MM}{seq:6}').source).toBe('INV-{yy}/{MM}{seq:6}');
  });

  it('which characters each position can print: the same length and a common character everywhere is an overlap', () => {
    const overlap = (a: string, b: string): boolean => patternsOverlap(parsePattern(a), parsePattern(b));
    expect(overlap('ORD{yyyyMMdd}{seq:6}', 'ORD{yyyyMMdd}{seq:6}')).toBe(true);
    expect(overlap('ORD{yyyyMMdd}{seq:6}', 'ORD{seq:14}')).toBe(true);
    expect(overlap('ORD{yyyyMMdd}{seq:6}', 'INV{yyyyMMdd}{seq:6}')).toBe(false);
    expect(overlap('ORD{yyyyMMdd}{seq:6}', 'ORD{yyyyMMdd}{seq:7}')).toBe(false);
    expect(overlap('ORD{yyyyMMdd}{seq:6}', 'ord{yyyyMMdd}{seq:6}')).toBe(false);
    expect(overlap('A{seq62:2}', 'Ab{seq:1}')).toBe(true);
    expect(overlap('A{seq36:2}', 'Ab{seq:1}')).toBe(false);
    expect(overlap('A{seq36:2}', 'AB{seq:1}')).toBe(true);
    expect(overlap('X-{seq:3}', 'X{seq:4}')).toBe(false);
  });

  it('the widest sequences stay below 2^63', () => {
    expect(parsePattern('{seq:18}').capacity).toBe(10n ** 18n - 1n);
    expect(parsePattern('{seq62:10}').capacity < 2n ** 63n).toBe(true);
  });

  it.each([
    [undefined, /1\.\.64/],
    ['', /1\.\.64/],
    ['A'.repeat(65), /1\.\.64/],
    ['ORD', /exactly one/],
    ['{seq:2}{seq:3}', /exactly one/],
    ['{seq:0}', /1\.\.18/],
    ['{seq:19}', /1\.\.18/],
    ['{seq62:11}', /1\.\.10/],
    ['{seq:x}', /neither/],
    ['{yyyymm}{seq:2}', /neither/],
    ['{}{seq:2}', /empty/],
    ['{yyyy{seq:2}', /neither/],
    ['{seq:2', /not closed/],
    ['A}{seq:2}', /has no/],
    ['A B{seq:2}', /not allowed/],
    ['A%{seq:2}', /not allowed/],
    ['Ä{seq:2}', /not allowed/],
  ])('refuses %j', (source, message) => {
    expect(refused(source)).toMatch(message);
  });

  it('a reset needs the date parts that tell its periods apart', () => {
    const ok = [
      ['ORD{yyyyMMdd}{seq:6}', 'daily'],
      ['{yyMMdd}{seq:6}', 'daily'],
      ['{dd}{MM}{yyyy}-{seq:6}', 'daily'],
      ['{yyyyMM}{seq:6}', 'monthly'],
      ['{yyyyMMddHH}{seq:6}', 'monthly'],
      ['{yyyy}{seq:6}', 'yearly'],
      ['{seq:6}', 'none'],
      ['{HH}{seq:6}', 'none'],
    ] as const;
    for (const [source, reset] of ok) {
      expect(() => checkPatternForReset(parsePattern(source), reset)).not.toThrow();
    }
    expect(() => checkPatternForReset(parsePattern('{yyyyMM}{seq:6}'), 'daily')).toThrow(/dd/);
    expect(() => checkPatternForReset(parsePattern('{MMdd}{seq:6}'), 'daily')).toThrow(/year/);
    expect(() => checkPatternForReset(parsePattern('{yyyy}{seq:6}'), 'monthly')).toThrow(/MM/);
    expect(() => checkPatternForReset(parsePattern('{seq:6}'), 'yearly')).toThrow(/would repeat/);
  });
});

describe('segment size', () => {
  it('the step, or the demand when larger or exact; never above 1 % of the period, never below 1', () => {
    expect(segmentSize(100, { wanted: 1, exact: false }, 999_999n)).toBe(100n);
    expect(segmentSize(100, { wanted: 500, exact: false }, 999_999n)).toBe(500n);
    expect(segmentSize(100, { wanted: 3, exact: true }, 999_999n)).toBe(3n);
    expect(segmentSize(100, { wanted: 1, exact: false }, 9_999n)).toBe(99n);
    expect(segmentSize(100, { wanted: 50, exact: false }, 99n)).toBe(1n);
    expect(segmentSize(100, { wanted: 0, exact: true }, 999_999n)).toBe(1n);
  });
});
