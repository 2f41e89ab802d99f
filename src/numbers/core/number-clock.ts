/**
 * One reading of the instance's two clocks (ms): the monotonic one (never goes back, but stops while
 * the machine is suspended: CLOCK_MONOTONIC) and the wall clock (runs through a suspend, but NTP or
 * an operator may step it either way).
 */
export interface Instant {
  readonly mono: number;
  readonly wall: number;
}

/**
 * The instance's clocks. The number generator measures time since a database clock reading with
 * them, never asks them what time it is: instances whose clocks disagree change nothing. Tests pass
 * a fake one.
 */
export interface InstanceClock {
  now(): Instant;
}

/**
 * Time from `from` to `to`, never less than what passed: the larger of the two clocks' deltas. A
 * suspended machine's monotonic clock stood still, its wall clock did not; a wall clock stepped
 * back shows less, the monotonic clock does not. A wall clock stepped forward shows more than
 * passed: that only shortens what a measurement allows.
 */
export function elapsedMs(from: Instant, to: Instant): number {
  return Math.max(to.mono - from.mono, to.wall - from.wall);
}

/** Whether `a` was read no later than `b` (the monotonic clock orders this process's readings). */
export function notAfter(a: Instant, b: Instant): boolean {
  return a.mono <= b.mono;
}

export const systemClock: InstanceClock = { now: () => ({ mono: performance.now(), wall: Date.now() }) };
