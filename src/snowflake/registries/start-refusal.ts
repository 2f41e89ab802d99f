import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { isValidWorkerId } from '../core/snowflake-layout';

export function startRefused(message: string): IdGenError {
  return new IdGenError(ErrorKind.SnowflakeStartRefused, message);
}

/** Refuses a start whose clock is behind the time recorded for this worker id. */
export function assertClockNotBehind(now: number, recorded: number, where: string): void {
  if (now < recorded) {
    throw startRefused(
      `clock ${new Date(now).toISOString()} is ${recorded - now} ms behind the time recorded in ${where} (${new Date(recorded).toISOString()}); refusing to start`,
    );
  }
}

export function assertWorkerIdInRange(workerId: number, where: string): number {
  if (!isValidWorkerId(workerId)) {
    throw startRefused(`worker id ${workerId} from ${where} is outside 0..1023; refusing to start`);
  }
  return workerId;
}
