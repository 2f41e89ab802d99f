import { RedisOptions } from 'ioredis';
import { createConnection } from 'mysql2';
import { withTimeout } from '../common/with-timeout';
import { AppConfig } from '../config/app-config';
import { Backend, backendLabel, failureWords } from './backend-words';
import { destroyConnection } from './database/destroy-connection';
import { disconnectNow } from './redis/disconnect-now';
import { redisClientOf } from './redis/redis-client.factory';

/** Each backend's connect attempt is bounded by this (a black-holed address never answers). */
const CONNECT_TIMEOUT_MS = 3000;
/** And the whole check of one backend (connect, one round trip) by this; then its connection is closed. */
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
 * trip each, closed again — also when the check ran out of time (a frozen server that accepted the
 * connection), so nothing of it is left open. A backend that does not answer refuses the start
 * with one line each (docs/decisions/0019-backends-checked-at-start.md); the orchestrator or the
 * operator starts it again. Both answer: nothing is logged.
 */
export async function checkBackendsAtStart(config: AppConfig): Promise<void> {
  const checks: Array<[Backend, () => Promise<void>]> = [
    ['mysql', () => checkMysql(config.database, CHECK_TIMEOUT_MS)],
    ['redis', () => checkRedis(config.redis, CHECK_TIMEOUT_MS)],
  ];
  const results = await Promise.all(
    checks.map(async ([backend, check]) => {
      try {
        await check();
        return null;
      } catch (err) {
        return `${backendLabel(backend, config)} ${failureWords(err, config)}: not starting (start it, or correct the variable)`;
      }
    }),
  );
  const failed = results.filter((line): line is string => line !== null);
  if (failed.length > 0) {
    throw new BackendStartError(failed);
  }
}

/** Connects and runs SELECT 1 within `ms`; the connection is destroyed (its socket too) either way. */
export async function checkMysql(db: AppConfig['database'], ms: number): Promise<void> {
  const conn = createConnection({
    host: db.host,
    port: db.port,
    user: db.user,
    password: db.password,
    database: db.database,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  // A failure after the check gave up (or a second report of it) has no one to tell.
  conn.on('error', () => undefined);
  // Queued behind the handshake: a refused connection or login fails this query with its error.
  const selected = new Promise<void>((resolve, reject) => conn.query('SELECT 1', (err) => (err ? reject(err) : resolve())));
  try {
    await withTimeout(selected, ms, 'MySQL');
  } finally {
    destroyConnection(conn);
  }
}

/**
 * No retries, no offline queue: the first failure is the answer. Our PING is the only command: no
 * ready check (INFO) nor client info (CLIENT SETINFO) before it. (A ready check still unanswered
 * when the check gives up fails as the socket closes, and ioredis then disconnects the closed
 * client again, arming another 2 s socket timer; a server still loading answers PING with LOADING.)
 */
const ONE_TRY: RedisOptions = {
  lazyConnect: true,
  connectTimeout: CONNECT_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  enableReadyCheck: false,
  disableClientInfo: true,
  retryStrategy: () => null,
};

/** Connects and sends PING within `ms` (Sentinel and Cluster through their seed nodes); the client is closed either way. */
export async function checkRedis(config: AppConfig['redis'], ms: number): Promise<void> {
  const client = redisClientOf(config, ONE_TRY, {
    sentinel: { sentinelRetryStrategy: () => null },
    cluster: { lazyConnect: true, clusterRetryStrategy: () => null },
  });
  // connect() rejects with "Connection is closed."; the cause is the last 'error' event (and
  // without a listener ioredis would print its own line).
  let cause: unknown = null;
  client.on('error', (err: unknown) => {
    cause = err;
  });
  const connected = (async () => {
    try {
      await client.connect();
      await client.ping();
    } catch (err) {
      throw cause ?? err;
    }
  })();
  try {
    await withTimeout(connected, ms, 'Redis');
  } finally {
    // A refused connection already ended the client (no retries): disconnect() would arm a timer.
    disconnectNow(client);
  }
}
