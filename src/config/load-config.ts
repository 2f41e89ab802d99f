import { CronTime } from 'cron';
import { AppConfig } from './app-config';
import { ConfigError } from './config.error';
import {
  Env,
  parseMysqlUrl,
  readBool,
  readCron,
  readEnum,
  readInt,
  readNumber,
  readOptionalString,
  readString,
} from './env-readers';
import { readIdHistoryConfig } from './id-history-config';
import { withLeafProperties } from './leaf-properties';
import { readMetricsConfig } from './metrics-config';
import { readNumbersConfig } from './numbers-config';
import { readRedisConfig } from './redis-config';
import { readSnowflakeConfig } from './snowflake-config';

export const DEFAULT_DATABASE_URL = 'mysql://shardleaf:shardleaf@127.0.0.1:3306/shardleaf';
export { DEFAULT_REDIS_URL } from './redis-config';

/** DB_QUERY_TIMEOUT_MS: a refill that needs a frozen database fails in about a second. */
export const DEFAULT_DB_QUERY_TIMEOUT_MS = 1000;
/**
 * QUEUE_LOCK_TTL_MS: a refill under its lock takes milliseconds, and every call in it is bounded:
 * even one whose every call took nearly its whole bound (four Redis calls, a pool wait and one
 * allocation) ends in about 7 s at the defaults. A lock that expires during a refill only lets
 * another instance over-fill. Short, so that a lock left by an attempt that timed out (and ran
 * when a frozen Redis resumed) holds up the shard's refills briefly.
 */
export const DEFAULT_QUEUE_LOCK_TTL_MS = 10_000;
/** SHUTDOWN_TIMEOUT_MS: under podman's default 10 s and Kubernetes' 30 s grace period. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 8000;
/** Its highest value: SIGTERM ends the process within 10 s (the process's own exit takes a little too). */
export const MAX_SHUTDOWN_TIMEOUT_MS = 9500;

function isCron(expr: string): boolean {
  if (expr.trim().split(/\s+/).length !== 6) {
    return false;
  }
  try {
    new CronTime(expr);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads and validates every setting once. Throws a ConfigError naming the first bad variable.
 * The only place that reads environment variables (main.ts passes `process.env`).
 */
export function loadConfig(rawEnv: Env): AppConfig {
  const env = withLeafProperties(rawEnv);
  const databaseUrl = readString(env, 'DATABASE_URL', DEFAULT_DATABASE_URL);
  const db = parseMysqlUrl('DATABASE_URL', databaseUrl);
  const adminToken = readOptionalString(env, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 8) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 8 characters (or unset to disable the admin API)');
  }
  const port = readInt(env, 'PORT', 8080, 0, 65535);
  const redis = readRedisConfig(env);
  const waitTimeoutMs = readInt(env, 'REDIS_WAIT_TIMEOUT_MS', 200, 1, 60_000);
  if (waitTimeoutMs > redis.commandTimeoutMs / 2) {
    // A WAIT blocks its connection for up to this long: the commands behind it must still get their
    // replies within the command timeout, or the connection is taken for silent and dropped.
    throw new ConfigError(
      'REDIS_WAIT_TIMEOUT_MS',
      `must be at most half of REDIS_COMMAND_TIMEOUT_MS (${redis.commandTimeoutMs}), got ${waitTimeoutMs}`,
    );
  }
  return {
    http: {
      host: readString(env, 'HOST', '0.0.0.0'),
      port,
      bodyLimit: readInt(env, 'HTTP_BODY_LIMIT', 64 * 1024, 1024, 16 * 1024 * 1024),
    },
    log: {
      level: readEnum(env, 'LOG_LEVEL', 'log', ['error', 'warn', 'log', 'debug', 'verbose'] as const),
    },
    database: {
      url: databaseUrl,
      ...db,
      poolSize: readInt(env, 'DB_POOL_SIZE', 10, 1, 200),
      migrationsRun: readBool(env, 'DB_MIGRATIONS_RUN', true),
      queryTimeoutMs: readInt(env, 'DB_QUERY_TIMEOUT_MS', DEFAULT_DB_QUERY_TIMEOUT_MS, 50, 600_000),
    },
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS, 1000, MAX_SHUTDOWN_TIMEOUT_MS),
    redis,
    admin: { token: adminToken },
    queue: {
      refillCron: readCron(env, 'QUEUE_REFILL_CRON', '0 */2 * * * *', isCron),
      reloadCron: readCron(env, 'QUEUE_RELOAD_CRON', '30 */2 * * * *', isCron),
      lockTtlMs: readInt(env, 'QUEUE_LOCK_TTL_MS', DEFAULT_QUEUE_LOCK_TTL_MS, 100, 3_600_000),
      demandLockWaitMs: readInt(env, 'QUEUE_DEMAND_LOCK_WAIT_MS', 250, 0, 60_000),
      idleRatio: readNumber(env, 'QUEUE_IDLE_RATIO', 0.2, 0, 1),
      refillAhead: readBool(env, 'QUEUE_REFILL_AHEAD', true),
      refillTargetMs: readInt(env, 'QUEUE_REFILL_TARGET_MS', 900_000, 1_000, 86_400_000),
      refillMaxSize: readInt(env, 'QUEUE_REFILL_MAX_SIZE', 100_000, 1, 10_000_000),
      maxBatch: 1000,
      gatePassMaxLength: readInt(env, 'GATE_PASS_MAX_LENGTH', 256, 1, 4096),
      maxStep: 1_000_000,
      waitReplicas: readInt(env, 'REDIS_WAIT_REPLICAS', 0, 0, 64),
      waitTimeoutMs,
    },
    snowflake: readSnowflakeConfig(env, port),
    segment: {
      enabled: readBool(env, 'SEGMENT_ENABLED', true),
      syncCron: readCron(env, 'SEGMENT_SYNC_CRON', '45 * * * * *', isCron),
      maxStep: readInt(env, 'SEGMENT_MAX_STEP', 1_000_000, 1, 1_000_000_000),
      loadTimeoutMs: readInt(env, 'SEGMENT_LOAD_TIMEOUT_MS', 10_000, 100, 600_000),
      maxBatch: 1000,
      keyMaxLength: 128,
    },
    idHistory: readIdHistoryConfig(env, isCron),
    numbers: readNumbersConfig(env),
    metrics: readMetricsConfig(env),
  };
}
