/** The errors of the number generator, with their messages. */
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { PeriodProof } from './number-segment';

/**
 * Database calls (allocations, clock readings; each time-bounded) one request may wait for in a row
 * without getting a number before it gives up with 503. A call it waits for serves every request
 * waiting then (an allocation takes their summed demand), so one or two are the rule.
 */
export const FRUITLESS_CALLS = 16;

export function notFound(key: string): IdGenError {
  return new IdGenError(ErrorKind.NumberFormatNotFound, `no number format '${key}'`);
}

export function noProgress(key: string): IdGenError {
  return new IdGenError(
    ErrorKind.BackendUnavailable,
    `number format '${key}': ${FRUITLESS_CALLS} database calls in a row (allocations and clock readings) brought ` +
      'this request no numbers (other requests took them, or the database clock could not be confirmed); retry',
  );
}

export function exhaustedError(key: string, proof: PeriodProof): IdGenError {
  const period = proof.period.key === '' ? 'its sequence (reset none)' : `period ${proof.period.key}`;
  return new IdGenError(
    ErrorKind.NumberExhausted,
    `number format '${key}' has used up ${period}: the next number would not fit its pattern's digits`,
  );
}
