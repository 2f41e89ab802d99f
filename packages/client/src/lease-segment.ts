/**
 * What one fetch brings: a run of IDs `first, first + stride, …` (`count` of them) — a queue or
 * segment lease — or a list of IDs (a snowflake batch).
 *
 * `maxId` (a queue lease: the app's max_limit_id, when it has one) is the largest ID the server
 * allows now: no ID above it is handed out, from this lease or from the leases still held when it
 * arrives (a limit lowered after a lease is honoured from the next lease on).
 */
export type Lease = { first: bigint; stride: bigint; count: number; maxId?: bigint } | { ids: readonly bigint[] };

/**
 * One lease being handed out. A run keeps its next ID and stride in fields of its own and a list its
 * array, so taking an ID reads no property of the lease object (one object shape on the hot path).
 * The buffer's fast path (IdBuffer.tryTakeOne) takes from a run through `left` and `nextId` itself.
 */
export class Segment {
  /** A run's next ID (0n for a list). */
  nextId: bigint;
  /** A run's step between IDs (0n for a list). */
  readonly stride: bigint;
  /** The IDs of a list (snowflake batch); null for a run. */
  readonly ids: readonly bigint[] | null;
  private pos = 0;
  /** When `left` falls to this, the next lease is fetched. */
  readonly refetchAt: number;

  constructor(
    lease: Lease,
    public left: number,
    prefetchAt: number,
    /** Clock time after which the rest of this lease is dropped (Infinity: never). */
    readonly expiresAt = Number.POSITIVE_INFINITY,
  ) {
    if ('ids' in lease) {
      this.ids = lease.ids;
      this.nextId = 0n;
      this.stride = 0n;
    } else {
      this.ids = null;
      this.nextId = lease.first;
      this.stride = lease.stride;
    }
    // Once ceil(left × prefetchAt) IDs are used (the epsilon absorbs 10 × 0.8 = 8.000000000000002).
    this.refetchAt = left - Math.ceil(left * prefetchAt - 1e-9);
  }

  static of(lease: Lease, prefetchAt: number, expiresAt: number): Segment {
    return new Segment(lease, 'ids' in lease ? lease.ids.length : lease.count, prefetchAt, expiresAt);
  }

  /** Drops the IDs left above `maxId` (they are increasing: a run's tail). */
  capAt(maxId: bigint): void {
    if (this.ids !== null || this.left === 0) {
      return;
    }
    if (this.nextId > maxId) {
      this.left = 0;
      return;
    }
    const allowed = (maxId - this.nextId) / this.stride + 1n;
    if (allowed < BigInt(this.left)) {
      this.left = Number(allowed);
    }
  }

  /** The next ID; the caller checked `left > 0`. */
  takeOne(): bigint {
    this.left--;
    const ids = this.ids;
    if (ids !== null) {
      return ids[this.pos++];
    }
    const id = this.nextId;
    this.nextId = id + this.stride;
    return id;
  }

  /** Appends up to `n` IDs to `out`; returns how many. */
  takeInto(out: bigint[], n: number): number {
    const k = n < this.left ? n : this.left;
    if (k <= 0) {
      return 0;
    }
    this.left -= k;
    const ids = this.ids;
    if (ids !== null) {
      for (let i = 0; i < k; i++) {
        out.push(ids[this.pos++]);
      }
      return k;
    }
    const stride = this.stride;
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
