import { MonotonicClock } from './clock';

/**
 * When a lease held in a remote store (a worker id in Redis) can no longer be known to be held.
 *
 * The store starts the lease's TTL when it executes the claim or renewal, which is after the
 * moment this process read its monotonic clock just before sending it. So `sentAt + ttl` is never
 * later than the store's expiry; the margin covers the two clocks' rates. Nothing here waits for a
 * reply: a process paused (SIGSTOP, a VM stall) past the deadline finds it passed as soon as it
 * runs again, before any reply from the store is read.
 */
export class LeaseDeadline {
  private deadline = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ttlMs: number,
    private readonly marginMs: number,
    private readonly clock: MonotonicClock,
  ) {
    if (!(marginMs >= 0 && marginMs < ttlMs)) {
      throw new RangeError(`lease margin ${marginMs} ms must be 0..${ttlMs - 1} (below the TTL)`);
    }
  }

  /** Read right BEFORE a claim or renewal is sent; passed to `extend` when it succeeded. */
  stamp(): number {
    return this.clock.now();
  }

  /** The claim or renewal sent at `sentAt` (a `stamp()`) succeeded. Never moves the deadline back. */
  extend(sentAt: number): void {
    this.deadline = Math.max(this.deadline, sentAt + this.ttlMs - this.marginMs);
  }

  /** The lease is known to be lost (taken by another holder, released). */
  drop(): void {
    this.deadline = Number.NEGATIVE_INFINITY;
  }

  /** Whether the lease is still known to be held now. */
  held(): boolean {
    return this.clock.now() < this.deadline;
  }

  /** Milliseconds until the deadline (negative once passed; -Infinity when never held or dropped). */
  remainingMs(): number {
    return this.deadline - this.clock.now();
  }
}
