/**
 * Reset periods on the database's calendar. Times here are the database clock's local date and
 * time (its session time zone) written as milliseconds "as if UTC": plain calendar arithmetic
 * with Date.UTC, never the instance's own clock or time zone. Pure.
 */

export const RESET_PERIODS = ['none', 'daily', 'monthly', 'yearly'] as const;
export type ResetPeriod = (typeof RESET_PERIODS)[number];

/** One period of a format: the sequence restarts at 1 in each. */
export interface Period {
  /** `''` (none), `yyyy` (yearly), `yyyyMM` (monthly), `yyyyMMdd` (daily); later periods sort higher. */
  key: string;
  /** First instant of the period (database local ms); -Infinity for `none`. */
  startMs: number;
  /** First instant after it; Infinity for `none`. */
  endMs: number;
}

/** The date parts a pattern can print. */
export interface DateFields {
  yyyy: string;
  yy: string;
  MM: string;
  dd: string;
  HH: string;
}

const DB_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]` as the database formats its clock → database local ms.
 * Throws an Error on anything else (a NULL clock, a year before 1000).
 */
export function parseDbTime(text: unknown): number {
  const m = typeof text === 'string' ? DB_TIME.exec(text) : null;
  if (!m || Number(m[1]) < 1000) {
    throw new Error(`the database clock answered '${String(text)}', not a date and time`);
  }
  const ms = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), ms);
  const check = new Date(t);
  if (check.getUTCDate() !== Number(m[3]) || check.getUTCHours() !== Number(m[4])) {
    throw new Error(`the database clock answered '${String(text)}', not a valid date and time`);
  }
  return t;
}

/** The period of `reset` that contains database local time `ms`. */
export function periodAt(reset: ResetPeriod, ms: number): Period {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  switch (reset) {
    case 'none':
      return { key: '', startMs: Number.NEGATIVE_INFINITY, endMs: Number.POSITIVE_INFINITY };
    case 'yearly':
      return { key: pad(y, 4), startMs: Date.UTC(y, 0, 1), endMs: Date.UTC(y + 1, 0, 1) };
    case 'monthly':
      return { key: pad(y, 4) + pad(mo + 1, 2), startMs: Date.UTC(y, mo, 1), endMs: Date.UTC(y, mo + 1, 1) };
    case 'daily': {
      const day = d.getUTCDate();
      return {
        key: pad(y, 4) + pad(mo + 1, 2) + pad(day, 2),
        startMs: Date.UTC(y, mo, day),
        endMs: Date.UTC(y, mo, day + 1),
      };
    }
    default:
      return assertNever(reset);
  }
}

/** The period a stored key names (the inverse of periodAt's key); throws on a key of another shape. */
export function periodOfKey(reset: ResetPeriod, key: string): Period {
  const shape: Record<ResetPeriod, RegExp> = {
    none: /^$/,
    yearly: /^\d{4}$/,
    monthly: /^\d{4}(0[1-9]|1[0-2])$/,
    daily: /^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/,
  };
  if (!shape[reset].test(key)) {
    throw new Error(`'${key}' is not a ${reset} period key`);
  }
  if (reset === 'none') {
    return periodAt('none', 0);
  }
  const y = Number(key.slice(0, 4));
  const mo = key.length >= 6 ? Number(key.slice(4, 6)) - 1 : 0;
  const day = key.length === 8 ? Number(key.slice(6, 8)) : 1;
  const period = periodAt(reset, Date.UTC(y, mo, day));
  if (period.key !== key) {
    throw new Error(`'${key}' is not a ${reset} period key`);
  }
  return period;
}

/**
 * The period an allocation uses: the one the database clock is in, unless a later one was used
 * already (the clock moved back: a step of NTP, the end of summer time, a redefined clock view).
 * A format's periods never go backwards, so no number of an old period follows one of a newer.
 */
export function allocationPeriod(reset: ResetPeriod, dbMs: number, latestKey: string | null): Period {
  const now = periodAt(reset, dbMs);
  if (latestKey !== null && latestKey > now.key) {
    return periodOfKey(reset, latestKey);
  }
  return now;
}

/** The printable date parts of database local time `ms`. */
export function dateFields(ms: number): DateFields {
  const d = new Date(ms);
  const yyyy = pad(d.getUTCFullYear(), 4);
  return {
    yyyy,
    yy: yyyy.slice(2),
    MM: pad(d.getUTCMonth() + 1, 2),
    dd: pad(d.getUTCDate(), 2),
    HH: pad(d.getUTCHours(), 2),
  };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function assertNever(value: never): never {
  throw new Error(`unknown reset period: ${String(value)}`);
}
