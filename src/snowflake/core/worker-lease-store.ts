/**
 * The port of the `redis` registry: worker ids 0..max leased from a shared store with a TTL. The
 * store judges expiry by its own clock, so instances' clocks never decide who holds an id. Each
 * id also keeps a recorded time: an upper bound of every ID issued with it, which a new holder
 * must be past before it issues. Every operation is one atomic step in the store.
 */
export type LeaseClaim =
  /**
   * `floor`: the id's recorded time; the new holder issues only once its clock is past it.
   * `confirmed`: false when replicas were required (REDIS_WAIT_REPLICAS) and did not confirm the
   * claim in time: the id is held, but the lease does not count until a confirmed renewal.
   */
  | { kind: 'claimed'; workerId: number; floor: number; confirmed: boolean }
  /** Every id 0..max is leased by a live holder. */
  | { kind: 'none-free' }
  /** Free ids exist, but each one's recorded time is further ahead of this clock than allowed. */
  | { kind: 'ahead'; floor: number }
  /**
   * The store's leases may be older than what holders were told (a Redis restarted from a snapshot
   * or empty, restored, failed over, flushed, or new: a new epoch): no id is handed out until a
   * whole TTL has passed, by when every holder that still believes in a lease the store no longer
   * knows has passed its deadline. Ask again after `waitMs`.
   */
  | { kind: 'wait'; waitMs: number };

export interface LeaseHolder {
  workerId: number;
  /** The holder's ip:port, for operators and the peer clock check. */
  identity: string;
  recordedUntil: number;
}

export interface ClaimRequest {
  owner: string;
  ttlMs: number;
  maxWorkerId: number;
  /** This instance's clock (ms since 1970). */
  now: number;
  /** Ids whose recorded time is more than this ahead of `now` are skipped. */
  allowanceMs: number;
  identity: string;
}

/**
 * `renewed`; `unconfirmed`: renewed, but replicas were required and did not confirm it in time
 * (it does not count: no deadline or ceiling from it); `lost`: not the holder (claimed by
 * another instance, or forgotten by a new epoch).
 */
export type RenewOutcome = 'renewed' | 'unconfirmed' | 'lost';

export interface WorkerLeaseStore {
  readonly description: string;
  /** Leases the lowest free id (expired, released or never used) whose recorded time is within the allowance. */
  claim(request: ClaimRequest): Promise<LeaseClaim>;
  /**
   * Extends the lease by `ttlMs` from the store's now and raises the recorded time to `until`,
   * only while `owner` holds the id.
   */
  renew(workerId: number, owner: string, ttlMs: number, until: number): Promise<RenewOutcome>;
  /**
   * Ends the lease of `owner` and sets the recorded time to `maxTimestamp` (the exact upper bound,
   * so the next holder need not wait). Resolves false when the id was no longer `owner`'s.
   */
  release(workerId: number, owner: string, maxTimestamp: number): Promise<boolean>;
  /** Holders whose recorded time is at or after `since`. */
  holders(since: number): Promise<LeaseHolder[]>;
  close(): Promise<void>;
}
