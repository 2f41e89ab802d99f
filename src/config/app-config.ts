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
  };
  redis: {
    url: string;
    /** Prefix of every Redis key; the seed's is `id.gen.`. */
    keyPrefix: string;
  };
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
    /** A list at or below idleRatio * step is refilled. */
    idleRatio: number;
    /** Largest `count` of a batch request. */
    maxBatch: number;
    /** Longest accepted gatePass, in UTF-16 code units. */
    gatePassMaxLength: number;
    /** Largest step an app may have (a refill pushes `step` entries to Redis). */
    maxStep: number;
    /** RPUSH chunk size of a refill. */
    pushChunk: number;
  };
}
