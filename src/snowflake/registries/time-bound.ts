import { ErrorKind, IdGenError } from '../../common/id-gen.error';

/**
 * Rejects when `promise` has not settled within `ms` (the timer never keeps the process alive).
 * The call itself is not cancelled and never sent again: a write that timed out may or may not
 * have run, and the registries treat it as not run without repeating it.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new IdGenError(ErrorKind.BackendUnavailable, `${what} did not answer within ${ms} ms`)),
      ms,
    );
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
