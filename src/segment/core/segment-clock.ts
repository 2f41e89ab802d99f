/** Time as the segment generator sees it; tests pass a fake one. */
export interface SegmentClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels the call. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const systemSegmentClock: SegmentClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // A pending load timeout never keeps the process alive on its own.
    timer.unref();
    return () => clearTimeout(timer);
  },
};
