import { afterDeadline } from './after-deadline';
import { ErrorKind, IdGenError } from './id-gen.error';

/**
 * Rejects with 503 BACKEND_UNAVAILABLE ("`what` did not answer within `ms` ms") when `promise` has
 * not settled in time: an outer deadline on a whole backend call or probe, beside the bound each
 * connection already has. The call itself is not cancelled and never sent again: a write that
 * timed out may or may not have run, and callers treat it as not run without repeating it. The
 * deadline fires only after the event loop read what already arrived (after-deadline.ts); the timer
 * never keeps the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let cancel: () => void = () => undefined;
  const deadline = new Promise<never>((_, reject) => {
    cancel = afterDeadline(ms, () => reject(new IdGenError(ErrorKind.BackendUnavailable, `${what} did not answer within ${ms} ms`)));
  });
  return Promise.race([promise, deadline]).finally(() => cancel());
}
