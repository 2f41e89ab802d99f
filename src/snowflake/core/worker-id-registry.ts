/** Another registered instance, whose clock the peer check reads over HTTP. */
export interface PeerEndpoint {
  ip: string;
  port: number;
  /** When it last reported, if the registry knows. */
  reportedAt?: number;
}

/** What `register` resolves. */
export interface Registration {
  workerId: number;
  /**
   * The time recorded for this worker id by its previous holder (an upper bound of its IDs), or 0.
   * The caller issues no ID until its clock is past it. A time further ahead of the clock than the
   * registry's allowance (record-ahead window + tolerance) is refused by `register` instead.
   */
  recordedUntil: number;
}

/** What a successful `heartbeat` resolves. */
export interface Report {
  /** The worker id to use from now on (only zk_recycle and redis may change it). */
  workerId: number;
  /**
   * When `workerId` is a fresh one: the time its earlier holders recorded (an upper bound of
   * their IDs, inclusive). The caller issues no ID with it at or below that time.
   */
  floor?: number;
  /**
   * The time now recorded in the registry as the upper bound of this instance's IDs: the caller
   * may issue IDs with timestamps below it (its ceiling).
   */
  recordedUntil: number;
}

/**
 * The port every worker-id registry (local, mysql, zk_normal, zk_recycle) implements. Times are
 * milliseconds since 1970 read from the service's clock.
 */
export interface WorkerIdRegistry {
  /** For logs, e.g. `zk_recycle at 127.0.0.1:2181`. */
  readonly description: string;
  /**
   * Registers this instance and resolves its worker id and the time recorded for it. Throws an
   * IdGenError (SNOWFLAKE_START_REFUSED) when the clock is behind the recorded time by more than
   * the allowance, when another live instance holds the same identity, or when no valid worker id
   * can be had.
   */
  register(now: number): Promise<Registration>;
  /**
   * The periodic report (every SNOWFLAKE_REPORT_INTERVAL_MS, and once before serving): records
   * `until` (now + SNOWFLAKE_RECORD_AHEAD_MS) as the upper bound of this instance's IDs FIRST, and
   * only then resolves it as the new ceiling. Failures (and a lost ownership) are reported by
   * rejecting; the caller logs and retries at the next tick, its ceiling not raised. `signal`
   * aborts when the service stops: a long step (waiting out a fresh id's floor, a store that
   * asks to wait) then ends at once with WaitAbandoned, and no fresh id is handed out.
   */
  heartbeat(now: number, until: number, signal?: AbortSignal): Promise<Report>;
  /** Throws an IdGenError when this instance must not issue IDs at `now` (a lost lease). */
  assertServing(now: number): void;
  /**
   * The worker id this instance holds now, or null (not registered; lost and not replaced yet).
   * IDs are issued only with this id: a fresh id replacing a lost one shows here before the
   * caller's generator has switched to it, and the generator's old id is refused meanwhile.
   */
  readonly heldWorkerId: number | null;
  /** Other instances that reported at or after `since` (this one excluded), most recent first. */
  peers(since: number): Promise<PeerEndpoint[]>;
  /**
   * Graceful shutdown (after the generator stopped): records `maxTimestamp` exactly (no ID of this
   * instance is later; it replaces the time recorded ahead, so a restart need not wait), gives up
   * the ownership of the identity and, in zk_recycle, returns the worker id to the pool at once.
   */
  release(maxTimestamp: number): Promise<void>;
  /** Closes connections (after release). */
  close(): Promise<void>;
}
