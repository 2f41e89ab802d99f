import { ConfigError } from './config.error';
import { Env, checkRedisUrl, readInt, readOptionalString, readString } from './env-readers';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';

/**
 * REDIS_COMMAND_TIMEOUT_MS: a frozen Redis costs a request at most this and two checks of the
 * watchdog (about 1.2 s); a Redis that stalls for less (a fork, another client's slow command) is
 * waited for, not dropped (docs/reliability.md, "Sizing the Redis bound").
 */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1000;

export interface RedisHostPort {
  host: string;
  port: number;
}

/** The three deployment shapes ioredis can talk to. */
export type RedisTopology =
  | { kind: 'standalone' }
  | { kind: 'sentinel'; sentinels: RedisHostPort[]; name: string }
  | { kind: 'cluster'; nodes: RedisHostPort[] };

export interface RedisConfig {
  /** Standalone: the server. Sentinel/Cluster: only its password, TLS (`rediss:`) and db are used. */
  url: string;
  /** Prefix of every Redis key; the Java reference service's is `id.gen.`. */
  keyPrefix: string;
  topology: RedisTopology;
  /**
   * Longest wait for a Redis reply, ms: a command not answered by then fails (never resent), and
   * the connection it was sent on is dropped and replaced (infra/redis/command-deadlines.ts).
   */
  commandTimeoutMs: number;
}

/** What REDIS_URL names: the server (standalone), and the credentials, TLS and db used with every topology. */
export interface RedisUrlParts {
  host: string;
  port: number;
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
}

/** The parts of a REDIS_URL already checked by readRedisConfig (checkRedisUrl). */
export function redisUrlParts(url: string): RedisUrlParts {
  const u = new URL(url);
  const db = Number(u.pathname.replace(/^\//, '') || '0');
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    tls: u.protocol === 'rediss:',
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
  };
}

/**
 * REDIS_URL (standalone, the default), REDIS_SENTINELS + REDIS_SENTINEL_NAME (Sentinel) or
 * REDIS_CLUSTER_NODES (Cluster); Sentinel and Cluster exclude each other.
 */
export function readRedisConfig(env: Env): RedisConfig {
  const url = checkRedisUrl('REDIS_URL', readString(env, 'REDIS_URL', DEFAULT_REDIS_URL));
  const keyPrefix = readString(env, 'KEY_PREFIX', 'id.gen.');
  if (keyPrefix.length > 128 || /\s/.test(keyPrefix)) {
    throw new ConfigError('KEY_PREFIX', 'must be at most 128 characters without spaces');
  }
  // A list and its "pushed up to" marker must share a Cluster slot: braces only as one non-empty
  // Redis hash tag (`{tag}`), which then decides the slot of every key.
  if (/[{}]/.test(keyPrefix) && !/^[^{}]*\{[^{}]+\}[^{}]*$/.test(keyPrefix)) {
    throw new ConfigError('KEY_PREFIX', 'may contain braces only as one non-empty Redis hash tag, e.g. "{idgen}."');
  }
  const commandTimeoutMs = readInt(env, 'REDIS_COMMAND_TIMEOUT_MS', DEFAULT_REDIS_COMMAND_TIMEOUT_MS, 50, 60_000);
  const clusterNodes = readOptionalString(env, 'REDIS_CLUSTER_NODES');
  const sentinels = readOptionalString(env, 'REDIS_SENTINELS');
  if (clusterNodes !== undefined && sentinels !== undefined) {
    throw new ConfigError('REDIS_CLUSTER_NODES', 'and REDIS_SENTINELS exclude each other: set one of them');
  }
  if (clusterNodes !== undefined) {
    return {
      url,
      keyPrefix,
      commandTimeoutMs,
      topology: { kind: 'cluster', nodes: parseHostPorts('REDIS_CLUSTER_NODES', clusterNodes) },
    };
  }
  if (sentinels !== undefined) {
    const name = readString(env, 'REDIS_SENTINEL_NAME', 'mymaster');
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) {
      throw new ConfigError('REDIS_SENTINEL_NAME', `must be a master name (letters, digits, '_', '.', '-'), got '${name}'`);
    }
    return {
      url,
      keyPrefix,
      commandTimeoutMs,
      topology: { kind: 'sentinel', sentinels: parseHostPorts('REDIS_SENTINELS', sentinels), name },
    };
  }
  return { url, keyPrefix, commandTimeoutMs, topology: { kind: 'standalone' } };
}

/** `host:port,host:port…` (IPv6 hosts in brackets). */
export function parseHostPorts(name: string, value: string): RedisHostPort[] {
  const out: RedisHostPort[] = [];
  for (const part of value.split(',').map((p) => p.trim())) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(part);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) {
      throw new ConfigError(name, `must be host:port[,host:port…], got '${part}'`);
    }
    out.push({ host: m[1].replace(/^\[|\]$/g, ''), port });
  }
  return out;
}
