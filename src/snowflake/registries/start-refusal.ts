import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { MAX_WORKER_ID } from '../core/snowflake-layout';

export function startRefused(message: string): IdGenError {
  return new IdGenError(ErrorKind.SnowflakeStartRefused, message);
}

/**
 * Refuses a start whose clock is behind the time recorded for this worker id by more than
 * `allowanceMs` (the record-ahead window + tolerance: a crash leaves a time up to that far ahead,
 * which the caller waits out).
 */
export function assertClockNotBehind(now: number, recorded: number, where: string, allowanceMs = 0): void {
  if (now + allowanceMs < recorded) {
    throw startRefused(
      `clock ${new Date(now).toISOString()} is ${recorded - now} ms behind the time recorded in ${where} (${new Date(recorded).toISOString()}), more than the ${allowanceMs} ms waited out; refusing to start`,
    );
  }
}

/** The message of a start refused because another live instance has the same identity. */
export function identityInUse(ipPort: string, agoMs: number, where: string): IdGenError {
  return startRefused(
    `another live instance reported as ${ipPort} ${agoMs} ms ago (${where}): give each instance a unique SNOWFLAKE_IP:SNOWFLAKE_PORT (e.g. the host's address, not a container's default bridge address); refusing to start`,
  );
}

/** `maxWorkerId`: the layout's largest worker id (SNOWFLAKE_LAYOUT). */
export function assertWorkerIdInRange(workerId: number, where: string, maxWorkerId = MAX_WORKER_ID): number {
  if (!(Number.isInteger(workerId) && workerId >= 0 && workerId <= maxWorkerId)) {
    throw startRefused(`worker id ${workerId} from ${where} is outside 0..${maxWorkerId} (SNOWFLAKE_LAYOUT); refusing to start`);
  }
  return workerId;
}
