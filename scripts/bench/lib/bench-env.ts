import { statSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { ROOT, runCommand } from './proc';

/** Where the bench servers keep their state: own database, own Redis key prefix. */
export interface BenchEnv {
  /** Server URL without the database, e.g. `mysql://root@127.0.0.1:3306`. */
  mysqlUrl: string;
  database: string;
  redisUrl: string;
  keyPrefix: string;
  adminToken: string;
}

export function benchEnv(): BenchEnv {
  return {
    mysqlUrl: (process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, ''),
    database: process.env.BENCH_DATABASE ?? 'shardleaf_bench',
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
    keyPrefix: `bench.${process.pid}.id.gen.`,
    adminToken: 'bench-admin-token',
  };
}

export function databaseUrl(env: BenchEnv): string {
  return `${env.mysqlUrl}/${env.database}`;
}

/** Drops and re-creates the bench database, so every run starts from the same state. */
export async function recreateDatabase(env: BenchEnv): Promise<void> {
  await withMysql(env, async (q) => {
    await q(`DROP DATABASE IF EXISTS \`${env.database}\``);
    await q(`CREATE DATABASE \`${env.database}\` CHARACTER SET utf8mb4`);
  });
}

export async function dropDatabase(env: BenchEnv): Promise<void> {
  await withMysql(env, (q) => q(`DROP DATABASE IF EXISTS \`${env.database}\``));
}

async function withMysql(env: BenchEnv, fn: (q: (sql: string) => Promise<unknown>) => Promise<unknown>): Promise<void> {
  const url = new URL(env.mysqlUrl);
  const conn = await createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  });
  try {
    await fn((sql) => conn.query(sql));
  } finally {
    await conn.end();
  }
}

/** Deletes every Redis key under the bench prefix. */
export async function cleanRedis(env: BenchEnv): Promise<number> {
  const redis = new Redis(env.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let deleted = 0;
  try {
    const escaped = env.keyPrefix.replace(/[*?[\]\\]/g, '\\$&');
    // Also the lists' "pushed up to" markers, `{<list>}:pushed` (QueueKeys.pushMark): a marker left
    // behind refuses every push of a list re-created below it (the scale case's apps 1 and 2).
    for (const pattern of [`${escaped}*`, `{${escaped}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) {
          deleted += await redis.del(...keys);
        }
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Builds dist/ with `nest build` when it is missing or older than any source or migration. */
export async function ensureBuild(log: (s: string) => void): Promise<void> {
  const entry = join(ROOT, 'dist/src/main.js');
  const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  const newest = Math.max(
    newestMtime(join(ROOT, 'src')),
    newestMtime(join(ROOT, 'migrations')),
    // The server requires the @shardleaf/java-hash workspace package's dist/, rebuilt here too.
    newestMtime(join(ROOT, 'packages/java-hash/src')),
  );
  if (built >= newest) {
    return;
  }
  log(existsSync(entry) ? 'dist/ is older than src/: building' : 'dist/ is missing: building');
  await runCommand(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'packages/java-hash/tsconfig.build.json'], {}, 300_000);
  await runCommand(process.execPath, [join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], {}, 300_000);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      newest = Math.max(newest, newestMtime(path));
    } else if (entry.name.endsWith('.ts')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/** A call to the bench server's admin API; throws on a non-2xx answer. */
export async function admin(env: BenchEnv, port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${env.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`${method} ${path}: ${res.status} ${text}`);
  }
  return text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
}

/**
 * The pid of the bench's Redis when it runs on this machine (INFO's process_id, checked against
 * /proc/<pid>/comm: a Redis in another pid namespace or host gives undefined).
 */
export async function localRedisPid(env: BenchEnv): Promise<number | undefined> {
  const redis = new Redis(env.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const m = /^process_id:(\d+)/m.exec(await redis.info('server'));
    const pid = m === null ? undefined : Number(m[1]);
    if (pid !== undefined && readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('redis')) {
      return pid;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}
