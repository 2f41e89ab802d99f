/** Another registered instance, whose clock the peer check reads over HTTP. */
export interface PeerEndpoint {
  ip: string;
  port: number;
  /** When it last reported, if the registry knows. */
  reportedAt?: number;
}

/**
 * The port every worker-id registry (local, mysql, zk_normal, zk_recycle) implements. Times are
 * milliseconds since 1970 read from the service's clock.
 */
export interface WorkerIdRegistry {
  /** For logs, e.g. `zk_recycle at 127.0.0.1:2181`. */
  readonly description: string;
  /**
   * Registers this instance and resolves its worker id. Throws an IdGenError
   * (SNOWFLAKE_START_REFUSED) when the clock is behind the time recorded for it, or when no valid
   * worker id can be had.
   */
  register(now: number): Promise<number>;
  /**
   * The periodic report (every SNOWFLAKE_REPORT_INTERVAL_MS). Resolves the worker id to use from
   * now on: only zk_recycle may change it, when it recovers from a lost lease. Failures are
   * reported by rejecting; the caller logs and retries at the next tick.
   */
  heartbeat(now: number): Promise<number>;
  /** Throws an IdGenError when this instance must not issue IDs at `now` (a lost lease). */
  assertServing(now: number): void;
  /** Other instances that reported at or after `since` (this one excluded), most recent first. */
  peers(since: number): Promise<PeerEndpoint[]>;
  /**
   * Graceful shutdown: records `maxTimestamp` (no ID of this instance is later) and, in
   * zk_recycle, returns the worker id to the pool at once.
   */
  release(maxTimestamp: number): Promise<void>;
  /** Closes connections (after release). */
  close(): Promise<void>;
}
