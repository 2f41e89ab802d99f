import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { ConfigError } from '../../../src/config/config.error';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, startApp } from '../../support/test-env';
import { QUIET_ENV, startRefusal, workerIdOf } from './snowflake-harness';

describe('snowflake local mode (configured worker ids, cache file)', () => {
  let env: TestEnv;
  let dir: string;
  const config = (extra: Record<string, string> = {}) =>
    env.config({
      ...QUIET_ENV,
      SNOWFLAKE_MODE: 'local',
      SNOWFLAKE_IP: '10.9.8.7',
      SNOWFLAKE_PORT: '8080',
      SNOWFLAKE_CACHE_DIR: dir,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      SNOWFLAKE_WORKER_ID_MAP: '{"10.9.8.7:8080": 42, "10.9.8.8:8080": 43}',
      ...extra,
    });
  const cacheFile = () => join(dir, readdirSync(dir).find((f) => f.endsWith('.json')) as string);
  const readCache = () => JSON.parse(readFileSync(cacheFile(), 'utf8')) as { workerId: number; maxTimestamp: number };

  beforeAll(async () => {
    env = await createTestEnv('sf_local');
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shardleaf-local-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  afterAll(async () => {
    await env.cleanup();
  });

  it('uses the worker id mapped to this ip:port and caches it with the max timestamp', async () => {
    const app = await startApp(config());
    expect(await workerIdOf(app, DEFAULT_TWEPOCH)).toBe(42);
    const cached = readCache();
    expect(cached.workerId).toBe(42);
    expect(Math.abs(cached.maxTimestamp - Date.now())).toBeLessThan(60_000);
    await app.close();
  });

  it('accepts a single SNOWFLAKE_WORKER_ID', async () => {
    const app = await startApp(config({ SNOWFLAKE_WORKER_ID_MAP: '', SNOWFLAKE_WORKER_ID: '5' }));
    expect(await workerIdOf(app, DEFAULT_TWEPOCH)).toBe(5);
    await app.close();
  });

  it('rewrites the cache file every interval', async () => {
    const app = await startApp(config({ SNOWFLAKE_REPORT_INTERVAL_MS: '100' }));
    try {
      // Twice, while running: the shutdown writes the file too, so only writes before close() count.
      for (let round = 0; round < 2; round++) {
        const recorded = readCache().maxTimestamp;
        writeFileSync(cacheFile(), JSON.stringify({ workerId: 42, maxTimestamp: 1 }));
        const rewritten = await pollUntil('a report to rewrite the cache file', () => {
          const cached = readCache();
          return cached.maxTimestamp !== 1 && cached;
        });
        expect(rewritten.workerId).toBe(42);
        // The time recorded so far, never less (the overwrite does not set it back).
        expect(rewritten.maxTimestamp).toBeGreaterThanOrEqual(recorded);
      }
    } finally {
      await app.close();
    }
  });

  it('refuses a start whose clock is behind the cached timestamp, and starts once it is not', async () => {
    const app = await startApp(config());
    await app.close();
    const file = cacheFile();
    writeFileSync(file, JSON.stringify({ workerId: 42, maxTimestamp: Date.now() + 3_600_000 }));
    expect(await startRefusal(config())).toMatch(/behind the time recorded in the cache file/);
    writeFileSync(file, JSON.stringify({ workerId: 42, maxTimestamp: Date.now() - 1000 }));
    const again = await startApp(config());
    await again.close();
  });

  it('refuses a configuration without a worker id for this instance', () => {
    expect(() => config({ SNOWFLAKE_WORKER_ID_MAP: '{"10.9.8.8:8080": 43}' })).toThrow(ConfigError);
  });
});
