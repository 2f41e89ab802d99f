/**
 * Whether an unexpected error is a backend (Redis/MySQL/ZooKeeper) being unreachable or failing,
 * which the client should see as a 503 and retry, rather than a bug (500).
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_SERVER_SHUTDOWN',
  'ER_NO_SUCH_TABLE',
  'ER_BAD_DB_ERROR',
]);

const BACKEND_NAMES = new Set([
  'MaxRetriesPerRequestError',
  'ReplyError',
  'QueryFailedError',
  'ConnectionIsNotSetError',
  'CannotConnectAlreadyConnectedError',
  'ExecutionError',
  // A Redis or MySQL call that was not answered in time (infra/redis/command-deadlines.ts,
  // infra/database/bounded-pool.ts).
  'RedisCommandTimeoutError',
  'DatabaseTimeoutError',
]);

export function isBackendFailure(err: unknown): boolean {
  if (!(err instanceof Error)) {
    return false;
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    return true;
  }
  const driverCode = (err as { driverError?: { code?: unknown } }).driverError?.code;
  if (typeof driverCode === 'string' && NETWORK_CODES.has(driverCode)) {
    return true;
  }
  if (BACKEND_NAMES.has(err.name) || BACKEND_NAMES.has(err.constructor.name)) {
    return true;
  }
  return /Connection is closed|connect ECONNREFUSED|Pool is closed|Can't add new command when connection is in closed state|Redis connection closed before the reply|READONLY|MASTERDOWN/i.test(
    err.message,
  );
}
