import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { NumberPattern, parsePattern } from './core/number-pattern';
import { RESET_PERIODS, ResetPeriod, parseDbTime } from './core/period';
import { CLOCK_VIEW } from './number-clock-sql';

/**
 * What the database answered about a format or its clock, checked before the generator sees it: a
 * row edited by hand or a clock view that answers NULL makes the call answer 503 naming the cause
 * (the service cannot serve the key until the database is put right), never a 500.
 */

export function storedReset(value: unknown, key: string): ResetPeriod {
  if (!(RESET_PERIODS as readonly unknown[]).includes(value)) {
    throw badState(`number_format '${key}' has reset_period '${String(value)}' (edited by hand?); it must be one of ${RESET_PERIODS.join(', ')}`);
  }
  return value as ResetPeriod;
}

export function storedPattern(value: string, key: string): NumberPattern {
  try {
    return parsePattern(value);
  } catch (err) {
    throw badState(`number_format '${key}' has pattern '${value}' (edited by hand?): ${(err as Error).message}`);
  }
}

/** The clock view's answer (`YYYY-MM-DD HH:MM:SS.ffffff` in NUMBER_TIME_ZONE) as the text the core reads. */
export function storedClock(value: unknown, timeZone: string): string {
  if (value === null || value === undefined) {
    throw badState(
      `the database clock view ${CLOCK_VIEW} answered NULL (in NUMBER_TIME_ZONE ${timeZone}): a CONVERT_TZ with a named ` +
        'time zone and no time zone tables? Redefine the view (docs/numbers.md)',
    );
  }
  try {
    parseDbTime(value);
  } catch (err) {
    throw badState(`the database clock view ${CLOCK_VIEW}: ${(err as Error).message}`);
  }
  return value as string;
}

/** Checks a stored period key with `check` (which throws on a key of another shape). */
export function storedPeriod<T>(key: string, period: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw badState(`number_seq of '${key}' has period '${period}' (edited by hand?): ${(err as Error).message}`);
  }
}

function badState(message: string): IdGenError {
  return new IdGenError(ErrorKind.BackendUnavailable, message);
}
