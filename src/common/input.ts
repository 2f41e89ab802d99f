import { badInput } from './id-gen.error';

/**
 * Parsing of untrusted input (path, query, body) into typed values. Every failure is a
 * BAD_INPUT IdGenError naming the field; nothing here trusts a value's JS type.
 */

const DIGITS = /^[0-9]+$/;

/** A decimal integer in [min, max] given as a path/query string. */
export function parseIntParam(name: string, raw: unknown, min: number, max: number): number {
  if (typeof raw !== 'string' || raw.length === 0) {
    throw badInput(`${name} is required and must be an integer ${min}..${max}`);
  }
  if (raw.length > 16 || !DIGITS.test(raw)) {
    throw badInput(`${name} must be an integer ${min}..${max}, got '${truncate(raw)}'`);
  }
  const n = Number(raw);
  if (n < min || n > max) {
    throw badInput(`${name} must be an integer ${min}..${max}, got ${raw}`);
  }
  return n;
}

/** Optional `count` query parameter: undefined when absent. */
export function parseCount(raw: unknown, max: number): number | undefined {
  if (raw === undefined) {
    return undefined;
  }
  return parseIntParam('count', raw, 1, max);
}

/** A required non-empty string of at most `maxLength` UTF-16 units. */
export function parseRequiredString(name: string, raw: unknown, maxLength: number): string {
  if (typeof raw !== 'string' || raw.length === 0) {
    throw badInput(`${name} is required and must be a non-empty string`);
  }
  if (raw.length > maxLength) {
    throw badInput(`${name} must be at most ${maxLength} characters, got ${raw.length}`);
  }
  return raw;
}

/** An integer from a JSON body: a JSON number that is a safe integer, or a decimal string. */
export function parseBodyInt(name: string, raw: unknown, min: number, max: number): number {
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= min && raw <= max) {
    return raw;
  }
  if (typeof raw === 'string' && DIGITS.test(raw) && raw.length <= 16) {
    return parseIntParam(name, raw, min, max);
  }
  throw badInput(`${name} must be an integer ${min}..${max}`);
}

/** A non-negative 64-bit integer from a JSON body: a safe-integer number or a decimal string. */
export function parseBodyBigint(name: string, raw: unknown, max: bigint): bigint {
  let value: bigint | undefined;
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) {
    value = BigInt(raw);
  } else if (typeof raw === 'string' && raw.length <= 20 && DIGITS.test(raw)) {
    value = BigInt(raw);
  }
  if (value === undefined || value > max) {
    throw badInput(`${name} must be an integer 0..${max} (a decimal string for values above 2^53)`);
  }
  return value;
}

export function parseOptionalString(name: string, raw: unknown, maxLength: number): string | undefined {
  if (raw === undefined || raw === null) {
    return undefined;
  }
  if (typeof raw !== 'string' || raw.length > maxLength) {
    throw badInput(`${name} must be a string of at most ${maxLength} characters`);
  }
  return raw;
}

/**
 * The `step` and/or `description` of a PATCH body already read by parseObjectBody (`description`
 * null clears it); at least one of them, else BAD_INPUT.
 */
export function parseStepDescriptionPatch(
  b: Record<string, unknown>,
  maxStep: number,
  descriptionMax: number,
): { step?: number; description?: string | null } {
  const patch: { step?: number; description?: string | null } = {};
  if (b.step !== undefined) {
    patch.step = parseBodyInt('step', b.step, 1, maxStep);
  }
  if (b.description !== undefined) {
    patch.description = parseOptionalString('description', b.description, descriptionMax) ?? null;
  }
  if (Object.keys(patch).length === 0) {
    throw badInput('nothing to change: give step or description');
  }
  return patch;
}

/** A JSON object body, refusing arrays, primitives and unknown keys. */
export function parseObjectBody(raw: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw badInput('body must be a JSON object');
  }
  const body = raw as Record<string, unknown>;
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw badInput(`unknown field(s): ${unknown.map((k) => truncate(k)).join(', ')}; allowed: ${allowed.join(', ')}`);
  }
  return body;
}

export function truncate(s: string, max = 64): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

const MAX_ID = (1n << 63n) - 1n;

/** A 64-bit ID from a path: 1..2^63-1 in decimal, parsed straight to bigint. */
export function parseIdParam(name: string, raw: unknown): bigint {
  if (typeof raw !== 'string' || !/^[0-9]{1,19}$/.test(raw) || BigInt(raw) < 1n || BigInt(raw) > MAX_ID) {
    throw badInput(`${name} must be a decimal integer 1..${MAX_ID}, got '${typeof raw === 'string' ? truncate(raw) : ''}'`);
  }
  return BigInt(raw);
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;
const EPOCH_MS = /^[0-9]{1,15}$/;
/**
 * What parseTimeParam reads, as one pattern (for the API document). The shape only: a date or
 * time that does not exist as written (2026-02-30, T24:00) fits it and is still refused.
 */
export const TIME_PARAM_PATTERN = `^(${EPOCH_MS.source.slice(1, -1)}|${ISO_TIME.source.slice(1, -1)})$`;
/** 9999-12-31T23:59:59.999Z. */
const MAX_TIME_MS = 253_402_300_799_999;

/**
 * Whether the date and time as written exist: Date.parse rolls 2026-02-30 over to March 2 and
 * takes T24:00 as the next day's midnight; here they are refused. Checked by building the
 * written fields back (as UTC: the zone does not change which fields exist).
 */
function fieldsExist(raw: string): boolean {
  const m = ISO_TIME.exec(raw);
  if (!m) {
    return false;
  }
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const sameFields =
    t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === s;
  return sameFields && (m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59));
}

/**
 * A point in time from a query: ISO 8601 with a zone (`2026-11-26T09:00:00Z`,
 * `2026-11-26T17:00:00+08:00`) or milliseconds since the epoch. Years 1970..9999.
 */
export function parseTimeParam(name: string, raw: unknown): Date {
  const bad = (): never => {
    throw badInput(
      `${name} must be an ISO 8601 time with a zone (e.g. 2026-11-26T09:00:00Z) or milliseconds since the epoch, got '${typeof raw === 'string' ? truncate(raw) : ''}'`,
    );
  };
  if (typeof raw !== 'string') {
    return bad();
  }
  let ms = Number.NaN;
  if (EPOCH_MS.test(raw)) {
    ms = Number(raw);
  } else if (ISO_TIME.test(raw) && fieldsExist(raw)) {
    ms = Date.parse(raw);
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TIME_MS) {
    return bad();
  }
  return new Date(ms);
}
