import { Clock } from './clock';
import { Lease } from './lease-segment';
import { LeaseSizing } from './lease-size';

/** Fetches a lease of (at least, or about) `size` IDs. May throw; the buffer reports it to callers. */
export type LeaseFetcher = (size: number) => Promise<Lease>;

/** The lease sizes (lease-size.ts: the first one, Leaf's dynamic step), and: */
export interface IdBufferOptions extends LeaseSizing {
  /** The next lease is fetched in the background once this share of the current one is used (0 < r <= 1). */
  prefetchAt: number;
  /**
   * After a failed fetch, no new fetch for this long from a background prefetch or `tryTakeOne`
   * (a caller that awaits — takeOne, take — still fetches at once).
   */
  retryDelayMs: number;
  /**
   * A lease is dropped (its unused IDs become a gap) this long after it arrived, so no ID is
   * handed out from a range older than this (default Infinity: leases live until used up).
   */
  leaseTtlMs?: number;
  /**
   * A fetch failing with an error this accepts also drops the IDs still held: the server revoked
   * them (a queue shard answering 410 QUEUE_EXHAUSTED, e.g. after its max_limit_id was lowered
   * below the ranges already leased). Default: none.
   */
  dropHeldOn?: (err: Error) => boolean;
  clock: Clock;
}

/** The state of one buffer, for tests and monitoring. */
export interface IdBufferView {
  /** IDs left in the current lease. */
  left: number;
  /** Whether the next lease is already here. */
  nextReady: boolean;
  /** Whether a fetch is in flight (at most one). */
  fetching: boolean;
  /** Size the next fetch asks for. */
  size: number;
  fetches: number;
}
