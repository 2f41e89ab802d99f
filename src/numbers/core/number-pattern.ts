import { badInput } from '../../common/id-gen.error';
import { BASE62_DIGITS, largestOf, toBase, type SeqBase } from './base62';
import { DateFields, ResetPeriod } from './period';

/**
 * Patterns of formatted numbers, e.g. `ORD{yyyyMMdd}{seq:6}`: literal text, date parts in braces
 * (`yyyy`, `yy`, `MM`, `dd`, `HH`, any run of them: `{yyyyMMdd}`), and exactly one sequence,
 * `{seq:N}` (decimal, zero-padded to N digits), `{seq36:N}` (upper-case base 36, `0-9A-Z`) or
 * `{seq62:N}` (base 62, `0-9A-Za-z`: case-sensitive). Every part has a fixed width, so a pattern
 * maps (date, sequence) to text one-to-one. Pure.
 */

export type DatePart = keyof DateFields;

export type PatternPart =
  | { kind: 'text'; text: string }
  | { kind: 'date'; part: DatePart }
  | { kind: 'seq'; width: number; base: SeqBase };

export interface NumberPattern {
  /** The pattern as stored: as written, with sequence widths without leading zeros (`{seq:06}` is `{seq:6}`). */
  source: string;
  parts: readonly PatternPart[];
  seqWidth: number;
  seqBase: SeqBase;
  /** The largest sequence that fits: base^N - 1. The first number of a period is 1. */
  capacity: bigint;
  /** Length of every number of the pattern. */
  length: number;
  /** The characters each position of a number can hold (a literal: itself). */
  positions: readonly string[];
}

export const PATTERN_MAX_LENGTH = 64;
/** 10^18 - 1, 36^12 - 1 and 62^10 - 1 stay below 2^63 (the sequence column is a signed BIGINT). */
export const MAX_SEQ_WIDTH: Record<SeqBase, number> = { 10: 18, 36: 12, 62: 10 };
/**
 * Literal text: letters, digits and a few separators that need no quoting in CSV or SQL. In a URL
 * `/`, `#` and `+` must be escaped (`%2F`, `%23`, `%2B`) where a number goes into a path or a
 * query; the others need no escaping.
 */
const LITERAL = /^[A-Za-z0-9_.:/#@+-]$/;
const SEQ = /^seq(62|36)?:([0-9]{1,2})$/;
const DIGITS = BASE62_DIGITS.slice(0, 10);
const DATE_TOKENS: readonly DatePart[] = ['yyyy', 'yy', 'MM', 'dd', 'HH'];

/** Parses a pattern; throws BAD_INPUT naming what is wrong. */
export function parsePattern(source: unknown): NumberPattern {
  if (typeof source !== 'string' || source.length === 0 || source.length > PATTERN_MAX_LENGTH) {
    throw badInput(`pattern must be a string of 1..${PATTERN_MAX_LENGTH} characters`);
  }
  const parts: PatternPart[] = [];
  let canonical = '';
  let text = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '{') {
      const close = source.indexOf('}', i);
      if (close < 0) {
        throw badInput(`pattern: '{' at ${i} is not closed`);
      }
      if (text !== '') {
        parts.push({ kind: 'text', text });
        text = '';
      }
      const inner = parseBraces(source.slice(i + 1, close));
      parts.push(...inner);
      canonical += inner[0].kind === 'seq' ? `{${seqToken(inner[0])}}` : source.slice(i, close + 1);
      i = close;
    } else if (c === '}') {
      throw badInput(`pattern: '}' at ${i} has no '{'`);
    } else if (LITERAL.test(c)) {
      text += c;
      canonical += c;
    } else {
      throw badInput(`pattern: '${c}' at ${i} is not allowed; literal text is A-Z a-z 0-9 and _ . : / # @ + -`);
    }
  }
  if (text !== '') {
    parts.push({ kind: 'text', text });
  }
  const seqs = parts.filter((p): p is Extract<PatternPart, { kind: 'seq' }> => p.kind === 'seq');
  if (seqs.length !== 1) {
    throw badInput(`pattern must hold exactly one {seq:N}, {seq36:N} or {seq62:N}, found ${seqs.length}`);
  }
  const positions = parts.flatMap(positionsOf);
  return {
    source: canonical,
    parts,
    seqWidth: seqs[0].width,
    seqBase: seqs[0].base,
    capacity: largestOf(seqs[0].width, seqs[0].base),
    length: positions.length,
    positions,
  };
}

/**
 * Whether two patterns can print the same text: the same length, and at every position a character
 * both can hold. (Dates are taken as any digits: an over-estimate, never a miss.)
 */
export function patternsOverlap(a: NumberPattern, b: NumberPattern): boolean {
  return a.length === b.length && a.positions.every((chars, i) => [...chars].some((c) => b.positions[i].includes(c)));
}

/**
 * A reset needs the date parts that tell its periods apart, else the same number would come back
 * in the next period: daily needs a year (`yyyy` or `yy`), `MM` and `dd`; monthly a year and
 * `MM`; yearly a year. Throws BAD_INPUT. (`yy` repeats after 100 years; docs/numbers.md.)
 */
export function checkPatternForReset(pattern: NumberPattern, reset: ResetPeriod): void {
  const has = new Set(pattern.parts.flatMap((p) => (p.kind === 'date' ? [p.part] : [])));
  const year = has.has('yyyy') || has.has('yy');
  const missing: string[] = [];
  if (reset !== 'none' && !year) {
    missing.push('a year (yyyy or yy)');
  }
  if ((reset === 'daily' || reset === 'monthly') && !has.has('MM')) {
    missing.push('MM');
  }
  if (reset === 'daily' && !has.has('dd')) {
    missing.push('dd');
  }
  if (missing.length > 0) {
    throw badInput(
      `a ${reset} reset restarts the sequence each period, so the pattern must print ${missing.join(' and ')}; ` +
        `'${pattern.source}' would repeat its numbers`,
    );
  }
}

/** One number: the date parts of `fields`, the sequence zero-padded. Throws a RangeError when `seq` does not fit. */
export function formatNumber(pattern: NumberPattern, fields: DateFields, seq: bigint): string {
  if (seq < 1n || seq > pattern.capacity) {
    throw new RangeError(`sequence ${seq} is outside 1..${pattern.capacity} of '${pattern.source}'`);
  }
  let out = '';
  for (const part of pattern.parts) {
    switch (part.kind) {
      case 'text':
        out += part.text;
        break;
      case 'date':
        out += fields[part.part];
        break;
      case 'seq':
        out += toBase(seq, part.width, part.base);
        break;
      default:
        return assertNever(part);
    }
  }
  return out;
}

function parseBraces(inner: string): PatternPart[] {
  const seq = SEQ.exec(inner);
  if (seq) {
    const base: SeqBase = seq[1] === '62' ? 62 : seq[1] === '36' ? 36 : 10;
    const width = Number(seq[2]);
    if (width < 1 || width > MAX_SEQ_WIDTH[base]) {
      throw badInput(`pattern: {${inner}} must have 1..${MAX_SEQ_WIDTH[base]} digits`);
    }
    return [{ kind: 'seq', width, base }];
  }
  const parts: PatternPart[] = [];
  let rest = inner;
  while (rest.length > 0) {
    const token = DATE_TOKENS.find((t) => rest.startsWith(t));
    if (token === undefined) {
      throw badInput(`pattern: {${inner}} is neither {seq:N}, {seq36:N}, {seq62:N} nor date parts (yyyy yy MM dd HH)`);
    }
    parts.push({ kind: 'date', part: token });
    rest = rest.slice(token.length);
  }
  if (parts.length === 0) {
    throw badInput('pattern: {} is empty');
  }
  return parts;
}

function seqToken(part: Extract<PatternPart, { kind: 'seq' }>): string {
  return `seq${part.base === 10 ? '' : part.base}:${part.width}`;
}

/** The characters each position of the part can print. */
function positionsOf(part: PatternPart): string[] {
  switch (part.kind) {
    case 'text':
      return [...part.text];
    case 'date':
      return Array.from({ length: part.part.length }, () => DIGITS);
    case 'seq':
      return Array.from({ length: part.width }, () => BASE62_DIGITS.slice(0, part.base));
    default:
      return assertNever(part);
  }
}

function assertNever(value: never): never {
  throw new Error(`unknown pattern part: ${JSON.stringify(value)}`);
}
