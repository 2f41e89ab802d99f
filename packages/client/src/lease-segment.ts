/**
 * What one fetch brings: a run of IDs `first, first + stride, …` (`count` of them) — a queue or
 * segment lease — or a list of IDs (a snowflake batch).
 *
 * `maxId` (a queue lease: the app's max_limit_id, when it has one) is the largest ID the server
 * allows now: no ID above it is handed out, from this lease or from the leases still held when it
 * arrives (a limit lowered after a lease is honoured from the next lease on).
 */
export type Lease = { first: bigint; stride: bigint; count: number; maxId?: bigint } | { ids: readonly bigint[] };

/** The largest value of a BigUint64Array element: a run's IDs, and the position after its last, stay at or below it. */
const MAX_U64 = (1n << 64n) - 1n;

/**
 * One lease being handed out. A run keeps its next ID and stride in a BigUint64Array of its own
 * (`run`: [next ID, stride]) and a list its array, so taking an ID reads no property of the lease
 * object (one object shape on the hot path). The buffer's fast path (IdBuffer.tryTakeOne) takes
 * from a run through `left` and `run` itself.
 *
 * Why a typed array and not a bigint field: V8 reads and writes its elements as raw 64-bit integers
 * (no bigint checks on the stored value) and storing the next ID allocates nothing and needs no
 * write barrier, while a fresh bigint stored into a lease object old enough to have left the young
 * generation costs a barrier (remembered-set) call per ID (callgrind: ~50 of ~240 instructions of a
 * `tryQueueId` call). IDs are positive signed 64-bit integers (the spec); a run whose IDs or the
 * position after its last one do not fit an unsigned 64-bit element is refused (RangeError).
 */
export class Segment {
  /** A run: [its next ID, its step between IDs]; a list: [0, 0]. */
  readonly run = new BigUint64Array(2);
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
    } else {
      const { first, stride } = lease;
      if (first < 0n || stride < 0n || first + stride * BigInt(Math.max(left, 1)) > MAX_U64) {
        throw new RangeError(`a run of ${left} IDs from ${first} by ${stride} does not fit 64 bits`);
      }
      this.ids = null;
      this.run[0] = first;
      this.run[1] = stride;
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
    const nextId = this.run[0];
    if (nextId > maxId) {
      this.left = 0;
      return;
    }
    const allowed = (maxId - nextId) / this.run[1] + 1n;
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
    const run = this.run;
    const id = run[0];
    run[0] = id + run[1];
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
    const stride = this.run[1];
    let id = this.run[0];
    for (let i = 0; i < k; i++) {
      out.push(id);
      id += stride;
    }
    this.run[0] = id;
    return k;
  }
}

/** No IDs: the state of a buffer before its first lease and after close(). */
export const EMPTY_SEGMENT = new Segment({ ids: [] }, 0, 1);
