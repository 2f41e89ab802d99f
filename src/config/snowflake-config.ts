import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config.error';
import { Env, readEnum, readInt, readOptionalString, readString } from './env-readers';

export const SNOWFLAKE_MODES = ['off', 'local', 'mysql', 'zk_normal', 'zk_recycle', 'redis'] as const;
export type SnowflakeMode = (typeof SNOWFLAKE_MODES)[number];

/** Leaf's default twepoch: 2010-11-04T01:42:54.657Z. */
export const DEFAULT_TWEPOCH = 1288834974657;
/** Each millisecond keeps at least this many sequences after its random start (100,000 IDs/s). */
const MIN_SEQUENCES_PER_MS = 100;

/** SNOWFLAKE_LAYOUT: the bit layouts of src/snowflake/core/snowflake-layout.ts (a unit test keeps them equal). */
export const SNOWFLAKE_LAYOUT_NAMES = ['leaf', 'js-safe'] as const;
export type SnowflakeLayoutName = (typeof SNOWFLAKE_LAYOUT_NAMES)[number];
/** What the configuration checks of each layout: its largest worker id and sequences per ms. */
export const LAYOUT_LIMITS: Record<SnowflakeLayoutName, { maxWorkerId: number; sequences: number }> = {
  leaf: { maxWorkerId: 1023, sequences: 4096 },
  'js-safe': { maxWorkerId: 31, sequences: 128 },
};
/** SNOWFLAKE_NAME (and Leaf's `leaf.name`): the ZooKeeper namespace segment. */
export const SNOWFLAKE_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
/** ZK_ADDRESS (and Leaf's `leaf.snowflake.zk.address`): `host:port[,host:port…][/chroot]`. */
export const ZK_ADDRESS_PATTERN = /^[A-Za-z0-9.\-[\]:]+:[0-9]{1,5}(,[A-Za-z0-9.\-[\]:]+:[0-9]{1,5})*(\/[A-Za-z0-9_./-]*)?$/;

export interface SnowflakeConfig {
  mode: SnowflakeMode;
  /** The bit layout: Leaf's 41/10/12, or js-safe 41/5/7 (every ID below 2^53). */
  layout: SnowflakeLayoutName;
  /** Leaf's `leaf.name`: the ZooKeeper namespace `/snowflake/{name}/…`. */
  name: string;
  twepoch: number;
  /** This instance's identity `ip:port` in the worker-id registries. */
  ip: string;
  port: number;
  /** local mode: the `{"ip:port": workerId}` map (a single SNOWFLAKE_WORKER_ID maps this instance). */
  workerIdMap: Record<string, number>;
  zk: { address: string; sessionTimeoutMs: number; connectTimeoutMs: number };
  /** Directory of the local cache files (worker id and max timestamp). */
  cacheDir: string;
  reportIntervalMs: number;
  /**
   * Each report records now + this as an upper bound of the IDs issued until the next report; IDs
   * are issued only below the recorded time, and a restart waits until its clock is past it. In
   * mysql mode it is also how long a row's last report keeps it owned by a live instance.
   */
  recordAheadMs: number;
  /** zk_recycle: an inuse worker id not reported for this long is reclaimed by any instance. */
  leaseMs: number;
  /** zk_recycle: an instance stops issuing when it has not reported for leaseMs - leaseMarginMs. */
  leaseMarginMs: number;
  /**
   * redis: TTL of a worker-id lease in Redis. The holder renews it every reportIntervalMs and stops
   * issuing once ttl minus a safety margin has passed (monotonic clock) since the last renewal
   * it sent and saw succeed.
   */
  leaseTtlMs: number;
  /** Largest clock rollback waited out (2× the offset) instead of refused. */
  clockToleranceMs: number;
  /** A new millisecond starts its sequence at a random value below this. */
  randomStartBound: number;
  /** Largest accepted difference to the mean clock of the registered peers; 0 disables the check. */
  peerMaxSkewMs: number;
  peerTimeoutMs: number;
  maxBatch: number;
}

/** Reads the SNOWFLAKE_* and ZK_* settings; `httpPort` is the default of the identity port. */
export function readSnowflakeConfig(env: Env, httpPort: number, now = Date.now()): SnowflakeConfig {
  const mode = readEnum(env, 'SNOWFLAKE_MODE', 'mysql', SNOWFLAKE_MODES);
  const layoutName = readEnum(env, 'SNOWFLAKE_LAYOUT', 'leaf', SNOWFLAKE_LAYOUT_NAMES);
  const layout = LAYOUT_LIMITS[layoutName];
  const name = readString(env, 'SNOWFLAKE_NAME', 'shardleaf');
  if (!SNOWFLAKE_NAME_PATTERN.test(name)) {
    throw new ConfigError('SNOWFLAKE_NAME', `must be 1..128 letters, digits, '_', '.' or '-', got '${name}'`);
  }
  const twepoch = readInt(env, 'SNOWFLAKE_TWEPOCH', DEFAULT_TWEPOCH, 0, Number.MAX_SAFE_INTEGER);
  if (twepoch >= now) {
    throw new ConfigError('SNOWFLAKE_TWEPOCH', `must be in the past (ms since 1970), got ${twepoch}`);
  }
  const ip = readString(env, 'SNOWFLAKE_IP', defaultIp());
  if (!/^[A-Za-z0-9.:_-]{1,64}$/.test(ip)) {
    throw new ConfigError('SNOWFLAKE_IP', `must be an IP address or host name, got '${ip}'`);
  }
  const port = readInt(env, 'SNOWFLAKE_PORT', httpPort, 0, 65535);
  const reportIntervalMs = readInt(env, 'SNOWFLAKE_REPORT_INTERVAL_MS', 3000, 50, 60_000);
  const recordAheadMs = readInt(env, 'SNOWFLAKE_RECORD_AHEAD_MS', 3 * reportIntervalMs, 1, 3_600_000);
  if (recordAheadMs <= reportIntervalMs) {
    throw new ConfigError(
      'SNOWFLAKE_RECORD_AHEAD_MS',
      `must be greater than SNOWFLAKE_REPORT_INTERVAL_MS (${reportIntervalMs}), got ${recordAheadMs}; 3 × the interval leaves room for two failed reports`,
    );
  }
  const leaseMs = readInt(env, 'SNOWFLAKE_LEASE_MS', 600_000, 1000, 86_400_000);
  const leaseMarginMs = readInt(env, 'SNOWFLAKE_LEASE_MARGIN_MS', Math.min(60_000, Math.floor(leaseMs / 4)), 0, leaseMs);
  if (leaseMs - leaseMarginMs < 2 * reportIntervalMs) {
    throw new ConfigError(
      'SNOWFLAKE_LEASE_MS',
      `minus SNOWFLAKE_LEASE_MARGIN_MS must be at least twice SNOWFLAKE_REPORT_INTERVAL_MS (${leaseMs} - ${leaseMarginMs} < 2 × ${reportIntervalMs})`,
    );
  }
  const leaseTtlMs = readInt(env, 'SNOWFLAKE_LEASE_TTL_MS', 10_000, 500, 600_000);
  if (mode === 'redis' && 2 * reportIntervalMs > leaseTtlMs - redisLeaseMarginMs(leaseTtlMs)) {
    throw new ConfigError(
      'SNOWFLAKE_LEASE_TTL_MS',
      `minus its safety margin (a fifth, ${redisLeaseMarginMs(leaseTtlMs)} ms) must be at least twice SNOWFLAKE_REPORT_INTERVAL_MS (${reportIntervalMs}) so that a lease is renewed well before it expires, got ${leaseTtlMs}`,
    );
  }
  // Leaf starts each millisecond below 100 of 4,096; js-safe's 128 sequences keep at least 100.
  const randomStartMax = layoutName === 'leaf' ? layout.sequences : layout.sequences - MIN_SEQUENCES_PER_MS;
  const randomStartBound = readInt(env, 'SNOWFLAKE_RANDOM_START_BOUND', layoutName === 'leaf' ? 100 : 8, 1, randomStartMax);
  const peerMaxSkewMs = readInt(env, 'SNOWFLAKE_PEER_MAX_SKEW_MS', 5000, 0, 3_600_000);
  if (mode === 'zk_recycle' && peerMaxSkewMs > 0 && peerMaxSkewMs >= leaseMarginMs) {
    throw new ConfigError(
      'SNOWFLAKE_PEER_MAX_SKEW_MS',
      `must be below SNOWFLAKE_LEASE_MARGIN_MS (${leaseMarginMs}) in zk_recycle mode, got ${peerMaxSkewMs}`,
    );
  }
  return {
    mode,
    layout: layoutName,
    name,
    twepoch,
    ip,
    port,
    workerIdMap: readWorkerIdMap(env, mode, `${ip}:${port}`, layout.maxWorkerId),
    zk: {
      address: readZkAddress(env),
      sessionTimeoutMs: readInt(env, 'ZK_SESSION_TIMEOUT_MS', 10_000, 1000, 600_000),
      connectTimeoutMs: readInt(env, 'ZK_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    },
    cacheDir: readString(env, 'SNOWFLAKE_CACHE_DIR', join(tmpdir(), 'shardleaf-snowflake')),
    reportIntervalMs,
    recordAheadMs,
    leaseMs,
    leaseMarginMs,
    leaseTtlMs,
    clockToleranceMs: readInt(env, 'SNOWFLAKE_CLOCK_TOLERANCE_MS', 5, 0, 1000),
    randomStartBound,
    peerMaxSkewMs,
    peerTimeoutMs: readInt(env, 'SNOWFLAKE_PEER_TIMEOUT_MS', 1000, 10, 60_000),
    maxBatch: 1000,
  };
}

function readZkAddress(env: Env): string {
  const address = readString(env, 'ZK_ADDRESS', '127.0.0.1:2181');
  if (!ZK_ADDRESS_PATTERN.test(address)) {
    throw new ConfigError('ZK_ADDRESS', `must be host:port[,host:port…][/chroot], got '${address}'`);
  }
  return address;
}

/** redis mode: the lease is taken as lost this long before its TTL runs out (a fifth of it). */
export function redisLeaseMarginMs(leaseTtlMs: number): number {
  return Math.floor(leaseTtlMs / 5);
}

function readWorkerIdMap(env: Env, mode: SnowflakeMode, self: string, maxWorkerId: number): Record<string, number> {
  const single = readOptionalString(env, 'SNOWFLAKE_WORKER_ID');
  const json = readOptionalString(env, 'SNOWFLAKE_WORKER_ID_MAP');
  if (single !== undefined && json !== undefined) {
    throw new ConfigError('SNOWFLAKE_WORKER_ID', 'set either SNOWFLAKE_WORKER_ID or SNOWFLAKE_WORKER_ID_MAP, not both');
  }
  let map: Record<string, number> = {};
  if (single !== undefined) {
    map = { [self]: readInt(env, 'SNOWFLAKE_WORKER_ID', 0, 0, maxWorkerId) };
  } else if (json !== undefined) {
    map = parseWorkerIdMap(json, maxWorkerId);
  }
  if (mode === 'local' && !(self in map)) {
    throw new ConfigError(
      'SNOWFLAKE_WORKER_ID_MAP',
      `local mode needs a worker id for this instance '${self}' (SNOWFLAKE_WORKER_ID, or SNOWFLAKE_WORKER_ID_MAP like {"${self}": 1})`,
    );
  }
  return map;
}

function parseWorkerIdMap(json: string, maxWorkerId: number): Record<string, number> {
  const fail = (why: string): never => {
    throw new ConfigError('SNOWFLAKE_WORKER_ID_MAP', `${why}; expected JSON like {"10.0.0.1:8080": 1, "10.0.0.2:8080": 2}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return fail('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail('must be a JSON object');
  }
  const map: Record<string, number> = {};
  const seen = new Map<number, string>();
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[A-Za-z0-9.:_-]{1,64}:[0-9]{1,5}$/.test(key)) {
      fail(`key '${key}' is not ip:port`);
    }
    const id = typeof value === 'string' && /^[0-9]{1,4}$/.test(value) ? Number(value) : value;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > maxWorkerId) {
      fail(`worker id of '${key}' must be an integer 0..${maxWorkerId} (SNOWFLAKE_LAYOUT)`);
    }
    const other = seen.get(id as number);
    if (other !== undefined) {
      fail(`worker id ${String(id)} is given to both '${other}' and '${key}'`);
    }
    seen.set(id as number, key);
    map[key] = id as number;
  }
  return map;
}

/** The first non-internal IPv4 address, or 127.0.0.1. */
function defaultIp(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) {
      if (a.family === 'IPv4' && !a.internal) {
        return a.address;
      }
    }
  }
  return '127.0.0.1';
}
