/**
 * Calls `fire` once `ms` have passed, but only after the event loop has read what already arrived
 * (a setTimeout, then a setImmediate: the poll phase runs between them): a reply that came while
 * the loop was stalled settles its call first, so `fire` sees it done and does nothing. Returns the
 * cancel function. The timer never keeps the process alive.
 */
export function afterDeadline(ms: number, fire: () => void): () => void {
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(fire);
  }, ms);
  timer.unref();
  return () => {
    clearTimeout(timer);
    if (immediate) {
      clearImmediate(immediate);
    }
  };
}
