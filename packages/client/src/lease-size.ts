/** The bounds and target of a buffer's lease size (IdBufferOptions). */
export interface LeaseSizing {
  initialSize: number;
  minSize: number;
  maxSize: number;
  targetLeaseMs: number;
}

/** The first lease's size: initialSize, within minSize..maxSize. */
export function initialLeaseSize(o: LeaseSizing): number {
  return Math.min(Math.max(Math.floor(o.initialSize), o.minSize), o.maxSize);
}

/**
 * Leaf's dynamic step on the client: a lease fetched less than targetLeaseMs after the previous one
 * makes the next twice as big (up to maxSize), unless a lease expired unused since (a bigger one
 * would expire too); one fetched at least twice targetLeaseMs after, half as big (down to minSize).
 */
export function nextLeaseSize(size: number, sinceLastFetchMs: number, expiredUnused: boolean, o: LeaseSizing): number {
  if (sinceLastFetchMs < o.targetLeaseMs && !expiredUnused) {
    return Math.min(size * 2, o.maxSize);
  }
  if (sinceLastFetchMs >= 2 * o.targetLeaseMs) {
    return Math.max(Math.floor(size / 2), o.minSize);
  }
  return size;
}
