/**
 * What one fetch brings: a run of IDs `first, first + stride, …` (`count` of them) — a queue or
 * segment lease — or a list of IDs (a snowflake batch).
 *
 * `maxId` (a queue lease: the app's max_limit_id, when it has one) is the largest ID the server
 * allows now: no ID above it is handed out, from this lease or from the leases still held when it
 * arrives (a limit lowered after a lease is honoured from the next lease on).
 */
export type Lease = { first: bigint; stride: bigint; count: number; maxId?: bigint } | { ids: readonly bigint[] };

/** One lease being handed out. */
export class Segment {
  private nextId: bigint;
  private pos = 0;
  /** When `left` falls to this, the next lease is fetched. */
  readonly refetchAt: number;

  constructor(
    private readonly lease: Lease,
    public left: number,
    prefetchAt: number,
    /** Clock time after which the rest of this lease is dropped (Infinity: never). */
    readonly expiresAt = Number.POSITIVE_INFINITY,
  ) {
    this.nextId = 'ids' in lease ? 0n : lease.first;
    // Once ceil(left × prefetchAt) IDs are used (the epsilon absorbs 10 × 0.8 = 8.000000000000002).
    this.refetchAt = left - Math.ceil(left * prefetchAt - 1e-9);
  }

  static of(lease: Lease, prefetchAt: number, expiresAt: number): Segment {
    return new Segment(lease, 'ids' in lease ? lease.ids.length : lease.count, prefetchAt, expiresAt);
  }

  /** Drops the IDs left above `maxId` (they are increasing: a run's tail). */
  capAt(maxId: bigint): void {
    if ('ids' in this.lease || this.left === 0) {
      return;
    }
    if (this.nextId > maxId) {
      this.left = 0;
      return;
    }
    const allowed = (maxId - this.nextId) / this.lease.stride + 1n;
    if (allowed < BigInt(this.left)) {
      this.left = Number(allowed);
    }
  }

  takeOne(): bigint {
    this.left--;
    if ('ids' in this.lease) {
      return this.lease.ids[this.pos++];
    }
    const id = this.nextId;
    this.nextId = id + this.lease.stride;
    return id;
  }

  /** Appends up to `n` IDs to `out`; returns how many. */
  takeInto(out: bigint[], n: number): number {
    const k = n < this.left ? n : this.left;
    if (k <= 0) {
      return 0;
    }
    this.left -= k;
    if ('ids' in this.lease) {
      const ids = this.lease.ids;
      for (let i = 0; i < k; i++) {
        out.push(ids[this.pos++]);
      }
      return k;
    }
    const stride = this.lease.stride;
    let id = this.nextId;
    for (let i = 0; i < k; i++) {
      out.push(id);
      id += stride;
    }
    this.nextId = id;
    return k;
  }
}

/** No IDs: the state of a buffer before its first lease and after close(). */
export const EMPTY_SEGMENT = new Segment({ ids: [] }, 0, 1);
