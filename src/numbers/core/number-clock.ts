/**
 * The instance's monotonic clock (ms). The number generator never reads the wall clock: it measures
 * time since a database clock reading with this, so instances whose clocks disagree, or a wall
 * clock stepped by NTP, change nothing. Tests pass a fake one.
 */
export interface MonotonicClock {
  now(): number;
}

export const systemMonotonicClock: MonotonicClock = { now: () => performance.now() };
