import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchEnv, databaseUrl } from './bench-env';
import { PLAIN_TS, ROOT, ServerProc, TS_NODE, freePort, startServer } from './proc';

/**
 * The real service from dist/ on a free port, with the bench database and key prefix. `timeoutMs`:
 * how long to wait for it to listen (startServer's default when not given); `mainJs`: another
 * build's entry point (queue-cpu-split.ts compares builds), named after it.
 */
export async function startService(
  env: BenchEnv,
  profileDir?: string,
  extra: NodeJS.ProcessEnv = {},
  timeoutMs?: number,
  mainJs?: string,
): Promise<ServerProc> {
  const port = await freePort();
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(process.env.CPU_PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.CPU_PROF_INTERVAL}`] : [])] : [];
  // The snowflake cache file's folder goes with the process (one per start, removed on stop).
  const cacheDir = mkdtempSync(join(tmpdir(), 'shardleaf-bench-'));
  const removeCache = (): void => rmSync(cacheDir, { recursive: true, force: true });
  let server: ServerProc;
  try {
    server = await startServer(
      mainJs ?? 'shardleaf',
      [...profile, mainJs ?? join(ROOT, 'dist/src/main.js')],
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl(env),
        REDIS_URL: env.redisUrl,
        KEY_PREFIX: env.keyPrefix,
        ADMIN_TOKEN: env.adminToken,
        SNOWFLAKE_MODE: 'local',
        SNOWFLAKE_WORKER_ID: '1',
        SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
        SNOWFLAKE_CACHE_DIR: cacheDir,
        NODE_ENV: 'production',
        ...extra,
      },
      port,
      timeoutMs,
    );
  } catch (err) {
    removeCache();
    throw err;
  }
  return {
    ...server,
    stop: async () => {
      try {
        await server.stop();
      } finally {
        removeCache();
      }
    },
  };
}

/**
 * A ceiling server of scripts/bench/servers (TypeScript, transpiled at start, without ts-node:
 * lib/plain-ts-register.js); `extra`: its own settings. CEILING_TS_NODE=1 runs it under ts-node as
 * before 2026-11-27, for comparing the two (docs/performance.md, "Ceilings without ts-node").
 */
export async function startCeiling(
  file: string,
  env: BenchEnv,
  profileDir?: string,
  extra: NodeJS.ProcessEnv = {},
  name: string = file,
): Promise<ServerProc> {
  const port = await freePort();
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(process.env.CPU_PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.CPU_PROF_INTERVAL}`] : [])] : [];
  return startServer(
    name,
    [...profile, ...(process.env.CEILING_TS_NODE === '1' ? TS_NODE : PLAIN_TS), join(ROOT, 'scripts/bench/servers', file)],
    { PORT: String(port), REDIS_URL: env.redisUrl, KEY_PREFIX: env.keyPrefix, NODE_ENV: 'production', ...extra },
    port,
  );
}
