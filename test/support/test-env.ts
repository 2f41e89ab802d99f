import { randomBytes } from 'node:crypto';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { createApp } from '../../src/bootstrap';
import { ProviderOverride, compileWith } from './provider-overrides';
import { AppConfig } from '../../src/config/app-config';
import { DEFAULT_DB_QUERY_TIMEOUT_MS, loadConfig } from '../../src/config/load-config';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../../src/config/redis-config';

/**
 * Integration-test plumbing against the real servers. Every suite gets its own database and Redis
 * key prefix and removes both afterwards; the shared servers are never stopped.
 *
 * TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306) must be able to create databases;
 * TEST_REDIS_URL defaults to redis://127.0.0.1:6379/0.
 */
export const TEST_MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
export const ADMIN_TOKEN = 'test-admin-token';

/** The production defaults of the backend bounds, for the tests of those bounds (createTestEnv loosens them). */
export const BOUNDS_AT_DEFAULTS: Record<string, string> = {
  REDIS_COMMAND_TIMEOUT_MS: String(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
  DB_QUERY_TIMEOUT_MS: String(DEFAULT_DB_QUERY_TIMEOUT_MS),
};

export interface TestEnv {
  database: string;
  keyPrefix: string;
  /** Environment for loadConfig: this suite's DB and prefix, schedules off. */
  env: Record<string, string>;
  config(overrides?: Record<string, string>): AppConfig;
  /** A raw SQL connection to this suite's database. */
  sql(query: string, params?: unknown[]): Promise<unknown>;
  redis: Redis;
  cleanup(): Promise<void>;
}

function serverUrl(): URL {
  return new URL(TEST_MYSQL_URL);
}

/** Host, port and account of TEST_MYSQL_URL, for a mysql2 connection to `database`. */
export function testMysqlOptions(database?: string): { host: string; port: number; user: string; password: string; database?: string } {
  const url = serverUrl();
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database,
  };
}

export async function rootQuery(query: string, database?: string, params: unknown[] = []): Promise<unknown> {
  const conn = await createConnection({
    ...testMysqlOptions(database),
    multipleStatements: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  try {
    const [rows] = await conn.query(query, params);
    return rows;
  } finally {
    await conn.end();
  }
}

export async function createTestEnv(name: string): Promise<TestEnv> {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const database = `shardleaf_t_${name.replace(/[^a-z0-9]/gi, '').slice(0, 20)}_${suffix}`;
  const keyPrefix = `test.${suffix}.id.gen.`;
  await rootQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
  const url = serverUrl();
  url.pathname = `/${database}`;
  const env: Record<string, string> = {
    DATABASE_URL: url.toString(),
    REDIS_URL: TEST_REDIS_URL,
    KEY_PREFIX: keyPrefix,
    ADMIN_TOKEN,
    QUEUE_REFILL_CRON: 'off',
    QUEUE_RELOAD_CRON: 'off',
    ID_HISTORY_PRUNE_CRON: 'off',
    // The dashboard's history timer reads the state too (sharing the /metrics cache): off, like the
    // crons; the suites of the history and the dashboard turn it on or tick it by hand.
    METRICS_HISTORY_INTERVAL_MS: '0',
    // The queue tests pin list lengths of the plain model (one step per refill, no background
    // refill); the tests of refill-ahead and the adaptive size turn these on (env.config(overrides)).
    QUEUE_REFILL_AHEAD: 'false',
    QUEUE_REFILL_MAX_SIZE: '1',
    LOG_LEVEL: 'error',
    PORT: '0',
    // The shared servers of a loaded test machine may stall past the production bounds (500 ms,
    // 1 s) now and then: a suite that is not about those bounds must not flake on them. The fault
    // tests set the production defaults back (BOUNDS_AT_DEFAULTS).
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    DB_QUERY_TIMEOUT_MS: '10000',
  };
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  // Each app a snowflake identity of its own (PORT=0 would give every app of a suite the same
  // ip:port, which a second live instance is refused for); a suite sets SNOWFLAKE_PORT to reuse one.
  let identityPort = 20_000;
  return {
    database,
    keyPrefix,
    env,
    redis,
    config: (overrides = {}) => loadConfig({ ...env, SNOWFLAKE_PORT: String(identityPort++), ...overrides }),
    sql: (query, params) => rootQuery(query, database, params),
    cleanup: async () => {
      await deleteByPrefix(redis, keyPrefix);
      redis.disconnect();
      await rootQuery(`DROP DATABASE IF EXISTS \`${database}\``);
    },
  };
}

export async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  const escaped = prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
  // Also the lists' "pushed up to" markers, `{<list>}:pushed` (QueueKeys.pushMark).
  for (const pattern of [`${escaped}*`, `{${escaped}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) {
        await redis.del(...keys);
      }
    } while (cursor !== '0');
  }
}

/**
 * A started (initialised, not listening) app; requests go through Fastify's inject. When the start
 * is refused, closes what was opened and rethrows. `overrides`: providers replaced (provider-overrides.ts).
 */
export async function startApp(config: AppConfig, overrides: readonly ProviderOverride[] = []): Promise<NestFastifyApplication> {
  const app = await createApp(config, undefined, compileWith(overrides));
  try {
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    return app;
  } catch (err) {
    await app.close();
    throw err;
  }
}

export interface InjectResult {
  status: number;
  body: string;
  contentType: string;
  json<T = unknown>(): T;
}

export async function request(
  app: NestFastifyApplication,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  url: string,
  options: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<InjectResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const token = options.token === undefined ? ADMIN_TOKEN : options.token;
  if (token !== null) {
    headers.authorization = `Bearer ${token}`;
  }
  let payload: string | undefined;
  if (options.rawBody !== undefined) {
    payload = options.rawBody;
  } else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] = headers['content-type'] ?? 'application/json';
  }
  const res = await app.getHttpAdapter().getInstance().inject({ method, url, headers, payload });
  return {
    status: res.statusCode,
    body: res.body,
    contentType: String(res.headers['content-type'] ?? ''),
    json: <T>() => JSON.parse(res.body) as T,
  };
}

/** Asserts the common error shape and returns the body. */
export function expectError(res: InjectResult, status: number, code?: number): { code: number; message: string } {
  if (res.status !== status) {
    throw new Error(`expected HTTP ${status}, got ${res.status}: ${res.body}`);
  }
  const body = res.json<{ code: number; message: string; error: string }>();
  if (typeof body.code !== 'number' || typeof body.message !== 'string' || !res.contentType.includes('json')) {
    throw new Error(`not a {code, message} JSON error: ${res.contentType} ${res.body}`);
  }
  if (code !== undefined && body.code !== code) {
    throw new Error(`expected code ${code}, got ${body.code}: ${res.body}`);
  }
  return body;
}
