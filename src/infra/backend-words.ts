import { AppConfig } from '../config/app-config';
import { redisUrlParts } from '../config/redis-config';

/** The two backends every start needs. */
export type Backend = 'mysql' | 'redis';

/**
 * How a log line or a readiness answer names a backend: what it is, the variable that sets it and
 * the address, e.g. `MySQL at DATABASE_URL (127.0.0.1:3306/shardleaf)`. Never a password.
 */
export function backendLabel(backend: Backend, config: BackendsConfig): string {
  if (backend === 'mysql') {
    return `MySQL at DATABASE_URL (${backendAddress('mysql', config)})`;
  }
  switch (config.redis.topology.kind) {
    case 'sentinel':
      return `Redis Sentinel at REDIS_SENTINELS (${backendAddress('redis', config)})`;
    case 'cluster':
      return `Redis Cluster at REDIS_CLUSTER_NODES (${backendAddress('redis', config)})`;
    case 'standalone':
      return `Redis at REDIS_URL (${backendAddress('redis', config)})`;
  }
}

type BackendsConfig = Pick<AppConfig, 'database' | 'redis'>;

/** Where a backend is: `host:port/database`, `host:port/db`, or the Sentinel / Cluster nodes. */
export function backendAddress(backend: Backend, config: BackendsConfig): string {
  if (backend === 'mysql') {
    const db = config.database;
    return `${db.host}:${db.port}/${db.database}`;
  }
  const topology = config.redis.topology;
  switch (topology.kind) {
    case 'sentinel':
      return `${hostPorts(topology.sentinels)}, master '${topology.name}'`;
    case 'cluster':
      return hostPorts(topology.nodes);
    case 'standalone': {
      const { host, port, db } = redisUrlParts(config.redis.url);
      return `${host}:${port}/${db}`;
    }
  }
}

function hostPorts(list: ReadonlyArray<{ host: string; port: number }>): string {
  return list.map((n) => `${n.host}:${n.port}`).join(',');
}

/** What a connection or driver error means, as a verb phrase after the backend's label. */
const BY_CODE: Record<string, string> = {
  ECONNREFUSED: 'refused the connection (nothing listens there)',
  ECONNRESET: 'closed the connection',
  ETIMEDOUT: 'did not answer in time',
  ENOTFOUND: 'has a host name that does not resolve',
  EAI_AGAIN: 'has a host name that could not be resolved now',
  EHOSTUNREACH: 'is unreachable (no route to the host)',
  ENETUNREACH: 'is unreachable (no route to the network)',
  EPIPE: 'closed the connection',
  PROTOCOL_CONNECTION_LOST: 'closed the connection',
  ER_ACCESS_DENIED_ERROR: 'refused the login (user or password)',
  ER_DBACCESS_DENIED_ERROR: "refused this user access to the database",
  ER_BAD_DB_ERROR: 'has no such database',
  ER_CON_COUNT_ERROR: 'has no connection left (max_connections)',
};

const WRONG_PASSWORD = 'refused the password (WRONGPASS)';

/** Redis replies and ioredis errors, by what their message starts with or contains. */
const BY_MESSAGE: ReadonlyArray<[RegExp, string]> = [
  [/^WRONGPASS|invalid username-password/i, WRONG_PASSWORD],
  [/^NOAUTH/i, 'wants a password (NOAUTH): set it in REDIS_URL'],
  [/^LOADING/i, 'is loading its data set'],
  // The sentinels answered, but watch no master of that name (ERR No such master with that name).
  [/No such master with that name|successfully, but got an invalid reply: null/i, 'knows no master of that name (REDIS_SENTINEL_NAME)'],
  [/All sentinels are unreachable/i, 'has no sentinel that answers'],
  [/Failed to refresh slots cache|None of startup nodes is available/i, 'has no cluster node that answers'],
  [/max retries per request|Connection is closed|Stream isn't writeable|enableOfflineQueue/i, 'is not connected'],
  // The queue's pop connection (queue-id/redis/pop-connection.ts) closed by the other side.
  [/^pop connection: connection closed$/, 'closed the connection'],
];

/**
 * A backend failure in our words: "refused the connection (nothing listens there)", "has no such
 * database", … — the error's own message only for what is not listed. With the configuration, a
 * refused Redis password behind Sentinel or Cluster says where the password comes from: the label
 * names REDIS_SENTINELS or REDIS_CLUSTER_NODES, the password is REDIS_URL's.
 */
export function failureWords(err: unknown, config?: BackendsConfig): string {
  const words = wordsOf(err);
  if (words === WRONG_PASSWORD && config !== undefined && config.redis.topology.kind !== 'standalone') {
    return `${words} (password from REDIS_URL)`;
  }
  return words;
}

function wordsOf(err: unknown): string {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code !== undefined && BY_CODE[code] !== undefined) {
    return BY_CODE[code];
  }
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const timedOut = /did not answer within (\d+ ?ms)/.exec(message);
  if (timedOut) {
    return `did not answer within ${timedOut[1]}`;
  }
  for (const [pattern, words] of BY_MESSAGE) {
    if (pattern.test(message)) {
      return words;
    }
  }
  const connect = /connect (E[A-Z]+)/.exec(message);
  if (connect && BY_CODE[connect[1]] !== undefined) {
    return BY_CODE[connect[1]];
  }
  return `failed: ${message.split('\n')[0].slice(0, 200)}`;
}
