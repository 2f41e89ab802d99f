/**
 * Where the service's memory goes at a given database: boots the app in process (no HTTP port),
 * then prints process.memoryUsage() (MiB) after start-up, after each of `scrapes` uncached
 * scrapes (and a history tick) and after a full GC; with `--heap DIR`, a heap snapshot at the end.
 * Run with --expose-gc. Usage:
 *   node --expose-gc -r ts-node/register/transpile-only scripts/bench/workers/metrics-memory.ts \
 *     '{"databaseUrl":…,"redisUrl":…,"keyPrefix":…,"scrapes":5,"env":{"METRICS_PER_SHARD":"true"}}' [--heap DIR]
 */
import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { createApp } from '../../../src/bootstrap';
import { loadConfig } from '../../../src/config/load-config';
import { HistorySampler } from '../../../src/metrics/history.sampler';
import { MetricsService } from '../../../src/metrics/metrics.service';

interface Spec {
  databaseUrl: string;
  redisUrl: string;
  keyPrefix: string;
  scrapes?: number;
  env?: Record<string, string>;
}

function usage(label: string): void {
  const m = process.memoryUsage();
  const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
  console.log(
    `${label}: rss ${mib(m.rss)}, heapTotal ${mib(m.heapTotal)}, heapUsed ${mib(m.heapUsed)}, external ${mib(m.external)}, arrayBuffers ${mib(m.arrayBuffers)} MiB`,
  );
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
  const heapAt = process.argv.indexOf('--heap');
  const config = loadConfig({
    DATABASE_URL: spec.databaseUrl,
    REDIS_URL: spec.redisUrl,
    KEY_PREFIX: spec.keyPrefix,
    ADMIN_TOKEN: 'memory-admin-token',
    SNOWFLAKE_MODE: 'off',
    QUEUE_RELOAD_CRON: 'off',
    QUEUE_REFILL_CRON: 'off',
    METRICS_STATE_TTL_MS: '0',
    METRICS_HISTORY_INTERVAL_MS: '0',
    LOG_LEVEL: 'warn',
    ...spec.env,
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  const app = await createApp(config);
  await app.init();
  usage('started');
  const metrics = app.get(MetricsService);
  const sampler = app.get(HistorySampler);
  for (let i = 0; i < (spec.scrapes ?? 5); i++) {
    await sampler.tick();
    const bytes = (await metrics.scrape()).body.length;
    usage(`scrape ${i + 1} (${(bytes / 1024).toFixed(0)} KiB)`);
  }
  gc?.();
  usage('after a full GC');
  if (heapAt > 0) {
    const dir = process.argv[heapAt + 1];
    mkdirSync(dir, { recursive: true });
    console.log(`heap snapshot: ${writeHeapSnapshot(join(dir, `metrics-${process.pid}.heapsnapshot`))}`);
  }
  await app.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
