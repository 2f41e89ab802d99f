import { Clock, systemClock } from './clock';
import { ShardleafArgumentError } from './errors';
import { FetchLike, TransportOptions } from './transport';

export interface ShardleafClientOptions {
  /** One base URL or several (round robin, failover), e.g. `http://127.0.0.1:8080`. */
  servers: string | readonly string[];
  /** Timeout of every HTTP call, ms (default 2000). */
  timeoutMs?: number;
  /** Fetch the next lease once this share of the current one is used, 0 < r <= 1 (default 0.8). */
  prefetchAt?: number;
  /** Size of the first queue/segment lease (default 1000). */
  initialLease?: number;
  /** Smallest queue/segment lease (default 100). */
  minLease?: number;
  /** Largest queue/segment lease (default 1,000,000; at most the server's 10,000,000). */
  maxLease?: number;
  /** A lease used up within this time makes the next one twice as big; one lasting twice as long, half (default 60,000 ms). */
  targetLeaseMs?: number;
  /**
   * A lease is dropped (its unused IDs become a gap) this long after it arrived, bounding how long
   * a range granted under an older max_limit_id can still be handed out (default: no bound).
   */
  leaseTtlMs?: number;
  /** Largest snowflake batch per call (default 1000, the server's maximum). */
  snowflakeBatch?: number;
  /** A failing server is skipped for backoffBaseMs × 2^(failures-1) ms, at most backoffMaxMs (defaults 100, 10,000). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Extra HTTP headers on every call. */
  headers?: Record<string, string>;
  /** Injected for tests: the HTTP function (default: Node's global fetch) and the clock. */
  fetch?: FetchLike;
  clock?: Clock;
}

/** The options checked, with their defaults: what the client and its buffers run with. */
export interface ClientSettings {
  transport: TransportOptions;
  clock: Clock;
  prefetchAt: number;
  initialLease: number;
  minLease: number;
  maxLease: number;
  targetLeaseMs: number;
  snowflakeBatch: number;
  /** After a failed fetch, a background prefetch or a try* call waits this long (backoffBaseMs). */
  retryDelayMs: number;
  leaseTtlMs: number | undefined;
}

/** The server's largest lease `count` (MAX_LEASE_COUNT in src/lease/lease-input.ts). */
export const MAX_LEASE_COUNT = 10_000_000;
/** The server's largest snowflake batch. */
export const MAX_SNOWFLAKE_BATCH = 1000;

/** Checks every option; throws a ShardleafArgumentError (a RangeError) naming the first one out of range. */
export function resolveOptions(options: ShardleafClientOptions): ClientSettings {
  const clock = options.clock ?? systemClock;
  const backoffBaseMs = positive('backoffBaseMs', options.backoffBaseMs ?? 100);
  const transport: TransportOptions = {
    servers: typeof options.servers === 'string' ? [options.servers] : [...options.servers],
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? 2000),
    backoffBaseMs,
    backoffMaxMs: positive('backoffMaxMs', options.backoffMaxMs ?? 10_000),
    clock,
    fetch: options.fetch ?? ((url, init) => fetch(url, init)),
    headers: options.headers,
  };
  const prefetchAt = options.prefetchAt ?? 0.8;
  // 1: the next lease is fetched when the last ID of the current one is taken.
  if (!(typeof prefetchAt === 'number' && prefetchAt > 0 && prefetchAt <= 1)) {
    throw new ShardleafArgumentError('prefetchAt', `prefetchAt must be a number in (0, 1], got ${options.prefetchAt}`);
  }
  const minLease = leaseSize('minLease', options.minLease ?? 100);
  const maxLease = leaseSize('maxLease', options.maxLease ?? 1_000_000);
  if (minLease > maxLease) {
    throw new ShardleafArgumentError('minLease', `minLease (${minLease}) must not be above maxLease (${maxLease})`);
  }
  const initialLease = leaseSize('initialLease', options.initialLease ?? 1000);
  const targetLeaseMs = positive('targetLeaseMs', options.targetLeaseMs ?? 60_000);
  const snowflakeBatch = positive('snowflakeBatch', options.snowflakeBatch ?? MAX_SNOWFLAKE_BATCH);
  if (!Number.isInteger(snowflakeBatch) || snowflakeBatch > MAX_SNOWFLAKE_BATCH) {
    throw new ShardleafArgumentError('snowflakeBatch', `snowflakeBatch must be an integer 1..${MAX_SNOWFLAKE_BATCH}, got ${options.snowflakeBatch}`);
  }
  const leaseTtlMs = options.leaseTtlMs === undefined ? undefined : positive('leaseTtlMs', options.leaseTtlMs);
  return { transport, clock, prefetchAt, initialLease, minLease, maxLease, targetLeaseMs, snowflakeBatch, retryDelayMs: backoffBaseMs, leaseTtlMs };
}

/** A count argument `n`: a positive safe integer. Throws. */
export function count(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ShardleafArgumentError('n', `n must be a positive integer, got ${n}`);
  }
  return n;
}

/** A tag or key argument: a non-empty string. Throws. */
export function nonEmpty(name: string, value: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ShardleafArgumentError(name, `${name} must be a non-empty string`);
  }
  return value;
}

/** A lease size option: an integer 1..MAX_LEASE_COUNT (a bigger lease would be refused with 400 forever). */
function leaseSize(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_LEASE_COUNT) {
    throw new ShardleafArgumentError(name, `${name} must be an integer 1..${MAX_LEASE_COUNT} (the server's largest lease), got ${value}`);
  }
  return value;
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new ShardleafArgumentError(name, `${name} must be a positive number, got ${value}`);
  }
  return value;
}
