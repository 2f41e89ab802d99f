/** Time as the client sees it; tests pass a fake one. */
export interface Clock {
  /** Milliseconds, monotonic enough for durations. */
  now(): number;
  /** Runs `fn` after `ms`; returns a cancel function. Must not keep the process alive. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
