/** The time source of the snowflake generator and registries; tests inject a fake. */
export interface Clock {
  /** Milliseconds since 1970 (Date.now()). */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The system clock shifted by `offsetMs` (fault injection: a clock behind or ahead). */
export function offsetClock(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, sleep: (ms) => systemClock.sleep(ms) };
}

/**
 * A clock that never jumps: milliseconds since an arbitrary origin, going on while the process is
 * paused (SIGSTOP) and unaffected by wall-clock steps. Leases are timed with it.
 */
export interface MonotonicClock {
  now(): number;
}

export const systemMonotonicClock: MonotonicClock = { now: () => performance.now() };
