/** The time source of the snowflake generator and registries; tests inject a fake. */
export interface Clock {
  /** Milliseconds since 1970 (Date.now()). */
  now(): number;
  /** Resolves after `ms`; rejects with WaitAbandoned as soon as `signal` aborts (a stop). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A wait given up because the service is stopping (the signal passed to `Clock.sleep` aborted). */
export class WaitAbandoned extends Error {
  constructor() {
    super('the service is stopping: wait abandoned');
    this.name = 'WaitAbandoned';
  }
}

/** Throws WaitAbandoned when `signal` has aborted (checked between the steps of a long task). */
export function throwIfStopping(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new WaitAbandoned();
  }
}

/** A timer wait that ends (rejects, its timer cleared) as soon as `signal` aborts. */
export function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new WaitAbandoned());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new WaitAbandoned());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: timerSleep,
};

/** The system clock shifted by `offsetMs` (fault injection: a clock behind or ahead). */
export function offsetClock(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, sleep: timerSleep };
}

/**
 * A clock that never jumps: milliseconds since an arbitrary origin, going on while the process is
 * paused (SIGSTOP) and unaffected by wall-clock steps. Leases are timed with it.
 */
export interface MonotonicClock {
  now(): number;
}

export const systemMonotonicClock: MonotonicClock = { now: () => performance.now() };
