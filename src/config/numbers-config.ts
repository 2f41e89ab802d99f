import { ConfigError } from './config.error';
import { Env, readInt, readString } from './env-readers';

export interface NumbersConfig {
  /**
   * NUMBER_CLOCK_MARGIN_MS: a segment stops being used this long before its period ends by the
   * database clock, as estimated from the last reading plus the time measured since (room for the
   * two clocks' rate difference); the clock is read again then.
   */
  clockMarginMs: number;
  /** NUMBER_CLOCK_TRUST_MS: a reading of the database clock is trusted at most this long. */
  clockTrustMs: number;
  /** NUMBER_BOUNDARY_WINDOW_MS: this close to a period's end, allocations take only what is asked, no preload. */
  boundaryWindowMs: number;
  /**
   * NUMBER_TIME_ZONE: the UTC offset (`+08:00`) whose days, months and years the resets follow,
   * applied to the database's UTC clock (the view shardleaf_db_clock). A numeric offset needs no
   * time zone tables; -12:59..+13:00, what MySQL and MariaDB both accept.
   */
  timeZone: string;
  /** Largest `count` of GET /api/number/{key}. */
  maxBatch: number;
}

export function readNumbersConfig(env: Env): NumbersConfig {
  const clockMarginMs = readInt(env, 'NUMBER_CLOCK_MARGIN_MS', 1000, 0, 600_000);
  const clockTrustMs = readInt(env, 'NUMBER_CLOCK_TRUST_MS', 60_000, 1000, 3_600_000);
  if (clockMarginMs >= clockTrustMs) {
    throw new ConfigError('NUMBER_CLOCK_MARGIN_MS', `must be below NUMBER_CLOCK_TRUST_MS (${clockTrustMs}), got ${clockMarginMs}`);
  }
  // The margin absorbs the rate difference of this instance's and the database's clocks over a
  // reading's life (up to 1000 ppm, far beyond what NTP leaves), the millisecond the database
  // truncates and a millisecond of timer resolution.
  const minMargin = Math.ceil(clockTrustMs / 1000) + 2;
  if (clockMarginMs < minMargin) {
    throw new ConfigError(
      'NUMBER_CLOCK_MARGIN_MS',
      `must be at least NUMBER_CLOCK_TRUST_MS / 1000 + 2 = ${minMargin} (1000 ppm of clock rate difference over the trust, ` +
        `and 2 ms of clock resolution), got ${clockMarginMs}`,
    );
  }
  return {
    clockMarginMs,
    clockTrustMs,
    boundaryWindowMs: readInt(env, 'NUMBER_BOUNDARY_WINDOW_MS', 5000, 0, 3_600_000),
    timeZone: readUtcOffset(env, 'NUMBER_TIME_ZONE', '+00:00'),
    maxBatch: 1000,
  };
}

const UTC_OFFSET = /^([+-])([0-9]{2}):([0-9]{2})$/;

/** A UTC offset `±HH:MM` in -12:59..+13:00. */
function readUtcOffset(env: Env, name: string, fallback: string): string {
  const value = readString(env, name, fallback);
  const m = UTC_OFFSET.exec(value);
  const minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : Number.NaN;
  if (!m || Number(m[3]) > 59 || minutes < -(12 * 60 + 59) || minutes > 13 * 60) {
    throw new ConfigError(name, `must be a UTC offset -12:59..+13:00 written ±HH:MM (e.g. +08:00), got '${value}'`);
  }
  return value;
}
