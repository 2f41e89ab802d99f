import { ConfigError } from './config.error';
import { Env, readInt } from './env-readers';

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
  /** Largest `count` of GET /api/number/{key}. */
  maxBatch: number;
}

export function readNumbersConfig(env: Env): NumbersConfig {
  const clockMarginMs = readInt(env, 'NUMBER_CLOCK_MARGIN_MS', 1000, 0, 600_000);
  const clockTrustMs = readInt(env, 'NUMBER_CLOCK_TRUST_MS', 60_000, 1000, 3_600_000);
  if (clockMarginMs >= clockTrustMs) {
    throw new ConfigError('NUMBER_CLOCK_MARGIN_MS', `must be below NUMBER_CLOCK_TRUST_MS (${clockTrustMs}), got ${clockMarginMs}`);
  }
  return {
    clockMarginMs,
    clockTrustMs,
    boundaryWindowMs: readInt(env, 'NUMBER_BOUNDARY_WINDOW_MS', 5000, 0, 3_600_000),
    maxBatch: 1000,
  };
}
