import { IdHistoryConfig } from './id-history-config';
import { MetricsConfig } from './metrics-config';
import { NumbersConfig } from './numbers-config';
import { RedisConfig } from './redis-config';
import { SnowflakeConfig } from './snowflake-config';

/** The typed, validated configuration. Built once by `loadConfig` from the environment. */
export interface AppConfig {
  http: {
    host: string;
    port: number;
    /** Largest accepted request body in bytes. */
    bodyLimit: number;
  };
  log: {
    level: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  };
  database: {
    url: string;
    host: string;
    port: number;
    user: string;
    password: string;
    database: string;
    poolSize: number;
    /** Apply pending migrations at start. */
    migrationsRun: boolean;
    /**
     * Longest wait for one query's reply, and separately for a pool connection, ms (after the
     * migrations at start): a query not answered by then fails and its connection is destroyed,
     * never reused (infra/database/bounded-pool.ts). A timed-out write may or may not have run.
     */
    queryTimeoutMs: number;
  };
  /** SIGTERM/SIGINT: the process exits after this long (ms) whatever is still running. */
  shutdownTimeoutMs: number;
  /** Standalone, Sentinel or Cluster, and the key prefix (see redis-config.ts). */
  redis: RedisConfig;
  admin: {
    /** Bearer token of the admin API; undefined disables the admin API. */
    token: string | undefined;
  };
  queue: {
    /** Cron expression (6 fields, with seconds) of the background refill, or null when off. */
    refillCron: string | null;
    /** Cron expression of the id_alloc reload, or null when off. */
    reloadCron: string | null;
    /** Redlock TTL of a shard's refill lock, ms. */
    lockTtlMs: number;
    /**
     * How long a request that found its list empty waits for the shard's refill lock held by
     * someone else, ms, before refilling without it (one such refill per shard at a time here).
     */
    demandLockWaitMs: number;
    /** A list at or below idleRatio * (the shard's current refill size) is refilled. */
    idleRatio: number;
    /** Refill ahead: a pop that leaves a list at or below the threshold starts one background refill. */
    refillAhead: boolean;
    /** Target life of one refill, ms (Leaf: 15 min); a refill used up faster makes the next one 2x. */
    refillTargetMs: number;
    /** Largest refill size (IDs) a shard grows to; never less than its step. */
    refillMaxSize: number;
    /** Largest `count` of a batch request. */
    maxBatch: number;
    /** Longest accepted gatePass, in UTF-16 code units. */
    gatePassMaxLength: number;
    /** Largest step an app may have (a refill pushes `step` entries to Redis). */
    maxStep: number;
    /** Replicas (Redis WAIT) that must confirm a pop before its IDs are returned; 0 = off. */
    waitReplicas: number;
    /** Timeout of that WAIT, ms; fewer confirmations drop the popped IDs (a gap) with a 503. */
    waitTimeoutMs: number;
  };
  segment: {
    /** Leaf segment mode on; when off its routes answer SEGMENT_DISABLED. */
    enabled: boolean;
    /** Cron expression of the leaf_alloc tag sync (Leaf: every 60 s), or null when off. */
    syncCron: string | null;
    /** Largest step the dynamic step may grow to (Leaf's MAX_STEP). */
    maxStep: number;
    /** A segment load from the DB taking longer is abandoned (its range becomes a gap), ms. */
    loadTimeoutMs: number;
    /** Largest `count` of a batch request. */
    maxBatch: number;
    /** Longest biz_tag (Leaf's column is varchar(128)). */
    keyMaxLength: number;
  };
  /** Leaf snowflake IDs and their worker-id registry (see snowflake-config.ts). */
  snowflake: SnowflakeConfig;
  /** The allocation history of queue and segment IDs (see id-history-config.ts). */
  idHistory: IdHistoryConfig;
  /** Formatted business numbers (see numbers-config.ts). */
  numbers: NumbersConfig;
  /** GET /metrics: state-gauge cache and optional token (see metrics-config.ts). */
  metrics: MetricsConfig;
}
