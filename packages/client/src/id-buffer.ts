import { IdBufferOptions, IdBufferView, LeaseFetcher } from './id-buffer-options';
import { ShardleafClosedError, ShardleafError } from './errors';
import { EMPTY_SEGMENT, Segment } from './lease-segment';
import { initialLeaseSize, nextLeaseSize } from './lease-size';

export type { Lease } from './lease-segment';
export type { IdBufferOptions, IdBufferView, LeaseFetcher } from './id-buffer-options';

/** Above any lease's `left` (a lease is at most ~10M IDs), and a small integer like `left` itself. */
const ALWAYS_CHECK = 2 ** 30 - 1;

/**
 * A double buffer of leased IDs for one key (a queue app's shard, a segment tag, a snowflake key):
 * IDs are handed out from the current lease synchronously; once `prefetchAt` of it is used the
 * next lease is fetched in the background (at most one fetch in flight); a caller that finds both
 * empty awaits that fetch. Every ID comes from exactly one lease and is handed out once: a lease
 * is owned by this buffer alone (the server's row update), and a position only moves forward.
 * Framework-free; time comes from the Clock.
 */
export class IdBuffer {
  private current: Segment = EMPTY_SEGMENT;
  /**
   * While the current lease has more than this many IDs left, an ID is taken with no other check
   * (the fast path, runs only): refetchAt + 1 while a prefetch may still be due, 0 once the next
   * lease is here or being fetched, ALWAYS_CHECK when leases expire (every take reads the clock),
   * when the current lease is a list, and after close(). Recomputed by settle() whenever current,
   * next or the fetch in flight change.
   */
  private fastAbove = ALWAYS_CHECK;
  private next: Segment | null = null;
  private fetching: Promise<void> | null = null;
  private lastError: Error | null = null;
  /** The last error pollOne threw: each refused fetch is thrown once. */
  private polledError: Error | null = null;
  private size: number;
  private lastFetchAt = Number.NaN;
  private fetches = 0;
  private failedAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private readonly leaseTtlMs: number;
  /** Whether leases expire (leaseTtlMs finite): each take then reads the clock. */
  private readonly ttlBounded: boolean;
  /** A lease expired with IDs left since the last fetch: the next one must not grow. */
  private expiredUnused = false;

  constructor(
    private readonly fetcher: LeaseFetcher,
    private readonly options: IdBufferOptions,
  ) {
    if (!(options.prefetchAt > 0 && options.prefetchAt <= 1)) {
      throw new RangeError(`prefetchAt must be in (0, 1], got ${options.prefetchAt}`);
    }
    if (!(options.minSize >= 1 && options.minSize <= options.maxSize)) {
      throw new RangeError(`need 1 <= minSize <= maxSize, got ${options.minSize}, ${options.maxSize}`);
    }
    this.leaseTtlMs = options.leaseTtlMs ?? Number.POSITIVE_INFINITY;
    if (!(this.leaseTtlMs > 0)) {
      throw new RangeError(`leaseTtlMs must be positive, got ${options.leaseTtlMs}`);
    }
    this.ttlBounded = this.leaseTtlMs !== Number.POSITIVE_INFINITY;
    this.size = initialLeaseSize(options);
    this.settle();
  }

  view(): IdBufferView {
    return {
      left: this.current.left,
      nextReady: this.next !== null,
      fetching: this.fetching !== null,
      size: this.size,
      fetches: this.fetches,
    };
  }

  /** One ID when one is here now (no await), else undefined (and a fetch is under way). */
  tryTakeOne(): bigint | undefined {
    // The fast path: the next ID of the current run when that take triggers no prefetch and no
    // lifetime is to be checked (fastAbove). The run's next ID is computed before the check and
    // stored only after it, so a take that goes the checked way changes nothing. In a loop of bare
    // classes V8 ran this order as fast as a bare counter, the check first ~0.8 of it (docs/performance.md).
    // The run is a BigUint64Array (lease-segment.ts): a list's [0, 0] is read here, never stored.
    const segment = this.current;
    const run = segment.run;
    const id = run[0];
    const next = id + run[1];
    const left = segment.left;
    if (left > this.fastAbove) {
      segment.left = left - 1;
      run[0] = next;
      return id;
    }
    return this.tryTakeChecked();
  }

  /**
   * tryTakeOne for a caller that polls (the client's try* methods): when nothing is buffered and
   * the last fetch was refused by the server (a ShardleafError: unknown app or tag, exhausted
   * shard, bad input), that error is thrown, once per failed fetch; otherwise undefined.
   */
  pollOne(): bigint | undefined {
    // tryTakeOne inlined by V8 (a copy of its fast path here measured the same).
    const id = this.tryTakeOne();
    if (id !== undefined) {
      return id;
    }
    // Nothing buffered (the rare path): was the last fetch refused?
    const failure = this.lastError;
    if (failure instanceof ShardleafError && failure !== this.polledError) {
      this.polledError = failure;
      throw failure;
    }
    return undefined;
  }

  /** The error of the last fetch when it failed and no fetch succeeded since; else null. */
  lastFailure(): Error | null {
    return this.lastError;
  }

  /** One ID, awaiting a fetch if both leases are used up. */
  async takeOne(): Promise<bigint> {
    for (;;) {
      if (this.closed) {
        throw new ShardleafClosedError();
      }
      const id = this.tryTakeOne();
      if (id !== undefined) {
        return id;
      }
      await this.waitForFetch();
    }
  }

  /** `n` IDs in the order handed out (each lease's IDs increasing). */
  async take(n: number): Promise<bigint[]> {
    const out: bigint[] = [];
    for (;;) {
      if (this.closed) {
        throw new ShardleafClosedError();
      }
      if (this.ttlBounded) {
        this.dropExpired();
      }
      const segment = this.current;
      segment.takeInto(out, n - out.length);
      if (segment.left <= segment.refetchAt) {
        this.prefetch();
      }
      if (out.length === n) {
        return out;
      }
      if (this.next !== null) {
        this.current = this.next;
        this.next = null;
        this.settle();
        continue;
      }
      // Both used up: wait for the fetch in flight (IDs taken so far stay taken: a gap if it fails).
      await this.waitForFetch();
    }
  }

  /** Stops fetching; IDs not handed out are lost (a gap). */
  close(): void {
    this.closed = true;
    this.current = EMPTY_SEGMENT;
    this.next = null;
    this.settle();
  }

  /** tryTakeOne with every check: lease lifetime, the switch to the next lease, the prefetch. */
  private tryTakeChecked(): bigint | undefined {
    if (this.ttlBounded) {
      this.dropExpired();
    }
    let segment = this.current;
    if (segment.left === 0) {
      if (this.next === null) {
        // Like a prefetch: a polling caller during an outage does not fetch more often than the retry delay.
        this.prefetch();
        return undefined;
      }
      segment = this.current = this.next;
      this.next = null;
      this.settle();
    }
    const id = segment.takeOne();
    if (segment.left <= segment.refetchAt) {
      this.prefetch();
    }
    return id;
  }

  /** Recomputes fastAbove from current, next and the fetch in flight (see fastAbove). */
  private settle(): void {
    if (this.ttlBounded || this.closed || this.current.ids !== null) {
      // A list (a snowflake batch, the empty segment) is taken from by Segment.takeOne only.
      this.fastAbove = ALWAYS_CHECK;
    } else if (this.next !== null || this.fetching !== null) {
      // No prefetch can be due: taking is only bounded by the IDs left.
      this.fastAbove = 0;
    } else {
      // The take that brings `left` down to refetchAt starts the prefetch: it goes the checked way.
      this.fastAbove = this.current.refetchAt + 1;
    }
  }

  /** Drops the leases older than leaseTtlMs (their unused IDs become a gap). */
  private dropExpired(): void {
    const now = this.options.clock.now();
    if (this.next !== null && now >= this.next.expiresAt) {
      this.next = null;
      this.expiredUnused = true;
    }
    if (this.current.left > 0 && now >= this.current.expiresAt) {
      this.current = EMPTY_SEGMENT;
      this.expiredUnused = true;
    }
  }

  /** The background fetch of the next lease, unless one is here or under way, or the last one just failed. */
  private prefetch(): void {
    if (
      this.next === null &&
      this.fetching === null &&
      !this.closed &&
      this.options.clock.now() - this.failedAt >= this.options.retryDelayMs
    ) {
      void this.startFetch();
    }
  }

  private async waitForFetch(): Promise<void> {
    const fetching = this.fetching ?? this.startFetch();
    await fetching;
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    if (this.next === null && this.current.left === 0 && this.lastError !== null) {
      throw this.lastError;
    }
  }

  /** The one fetch of this buffer; its promise never rejects (the error is kept for waiters). */
  private startFetch(): Promise<void> {
    if (this.fetching !== null) {
      return this.fetching;
    }
    if (!Number.isNaN(this.lastFetchAt)) {
      this.size = nextLeaseSize(this.size, this.options.clock.now() - this.lastFetchAt, this.expiredUnused, this.options);
    }
    this.expiredUnused = false;
    const size = this.size;
    this.fetches++;
    const fetching = (async () => {
      try {
        const lease = await this.fetcher(size);
        if (this.closed) {
          return;
        }
        this.lastFetchAt = this.options.clock.now();
        this.lastError = null;
        const segment = Segment.of(lease, this.options.prefetchAt, this.lastFetchAt + this.leaseTtlMs);
        if (!('ids' in lease) && lease.maxId !== undefined) {
          // The server's limit now: it may have been lowered since the leases still held were granted.
          segment.capAt(lease.maxId);
          this.current.capAt(lease.maxId);
          this.next?.capAt(lease.maxId);
          if (this.next !== null && this.next.left === 0) {
            this.next = null;
          }
        }
        if (segment.left === 0) {
          throw new Error('the server answered an empty lease');
        }
        if (this.current.left === 0 && this.next === null) {
          this.current = segment;
        } else {
          this.next = segment;
        }
      } catch (err) {
        this.lastError = err instanceof Error ? err : new Error(`lease fetch failed: ${JSON.stringify(err)}`);
        this.failedAt = this.options.clock.now();
        if (this.options.dropHeldOn?.(this.lastError) === true) {
          this.current = EMPTY_SEGMENT;
          this.next = null;
        }
      } finally {
        this.fetching = null;
        this.settle();
      }
    })();
    this.fetching = fetching;
    this.settle();
    return fetching;
  }
}
