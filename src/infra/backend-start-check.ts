import Redis, { Cluster, RedisOptions } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { AppConfig } from '../config/app-config';
import { redisUrlParts } from '../config/redis-config';
import { Backend, backendLabel, failureWords } from './backend-words';

/** Each backend's connect attempt is bounded by this (a black-holed address never answers). */
const CONNECT_TIMEOUT_MS = 3000;
/** And the whole check of one backend (connect, one round trip, close) by this. */
const CHECK_TIMEOUT_MS = 4000;

/** A backend that did not answer the start's check: one line naming it, its variable and address. */
export class BackendStartError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('; '));
    this.name = 'BackendStartError';
  }
}

/**
 * Before the service is built: one connection to MySQL and one to Redis (in parallel), one round
 * trip each, closed again. A backend that does not answer refuses the start with one line each
 * (docs/decisions/0019-backends-checked-at-start.md); the orchestrator or the operator starts it
 * again. Both answer: nothing is logged.
 */
export async function checkBackendsAtStart(config: AppConfig): Promise<void> {
  const checks: Array<[Backend, () => Promise<void>]> = [
    ['mysql', () => checkMysql(config.database)],
    ['redis', () => checkRedis(config.redis)],
  ];
  const results = await Promise.all(
    checks.map(async ([backend, check]) => {
      try {
        await bounded(check(), CHECK_TIMEOUT_MS);
        return null;
      } catch (err) {
        return `${backendLabel(backend, config)} ${failureWords(err)}: not starting (start it, or correct the variable)`;
      }
    }),
  );
  const failed = results.filter((line): line is string => line !== null);
  if (failed.length > 0) {
    throw new BackendStartError(failed);
  }
}

async function checkMysql(db: AppConfig['database']): Promise<void> {
  const conn = await createConnection({
    host: db.host,
    port: db.port,
    user: db.user,
    password: db.password,
    database: db.database,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  try {
    await conn.query('SELECT 1');
  } finally {
    conn.destroy();
  }
}

/** No retries, no offline queue: the first failure is the answer. */
const ONE_TRY: RedisOptions = {
  lazyConnect: true,
  connectTimeout: CONNECT_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  retryStrategy: () => null,
};

async function checkRedis(config: AppConfig['redis']): Promise<void> {
  const { username, password, db, tls } = redisUrlParts(config.url);
  const auth = { username, password, tls: tls ? {} : undefined };
  const topology = config.topology;
  let client: Redis | Cluster;
  switch (topology.kind) {
    case 'sentinel':
      client = new Redis({
        ...ONE_TRY,
        ...auth,
        db,
        sentinels: topology.sentinels,
        name: topology.name,
        sentinelRetryStrategy: () => null,
      });
      break;
    case 'cluster':
      client = new Cluster(topology.nodes, { lazyConnect: true, clusterRetryStrategy: () => null, redisOptions: { ...ONE_TRY, ...auth } });
      break;
    case 'standalone':
      client = new Redis(config.url, ONE_TRY);
  }
  // connect() rejects with "Connection is closed."; the cause is the last 'error' event (and
  // without a listener ioredis would print its own line).
  let cause: unknown = null;
  client.on('error', (err: unknown) => {
    cause = err;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw cause ?? err;
  } finally {
    client.disconnect();
  }
}

function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('did not answer within the start check'), { code: 'ETIMEDOUT' })), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
