import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import Redis from 'ioredis';
import { cpuMicros } from '../lib/cpu';
import { BenchEnv, admin, databaseUrl } from '../lib/bench-env';
import { LoadResult, median, runLoad } from '../lib/load';
import { BenchOptions } from '../lib/options';
import { ROOT, ServerProc, TS_NODE, runNode, sleep } from '../lib/proc';
import { startService } from '../lib/service';
import { Row } from '../lib/table';
import type { SweepTimes } from '../workers/scale-sweep';
import { gatePassPerShard } from './queue';

/**
 * Issue 11, item 5: how the service's fixed costs grow with the number of lists — apps × 64
 * shards, measured at 16, 64 and 256 apps (4, 16, 64 with --quick) on one database that grows:
 * one cron sweep (every list empty, and every list full), start-up (lists full, and lists empty:
 * the start-up sweep fills them before the service listens), a `/metrics` scrape (first: the state
 * read, then cached), Redis memory and the service's RSS. Then, at the largest size, the request
 * path during a sweep that refills every other list: p99 of queue gets (app 0, 64 shards) with and
 * without that sweep, alternated.
 */
/** App ids are 0..apps-1 (256 apps use every id); the load of the p99 phase goes to app 0. */
const HOT_APP = 0;
/** Start-up with thousands of empty lists refills them all first: allow minutes. */
const START_TIMEOUT_MS = 600_000;

interface SizePoint {
  apps: number;
  shards: number;
  sweep: SweepTimes;
  warmStartMs: number;
  /** Service CPU time (ms) used by the time it listened, lists full. */
  warmStartCpuMs: number;
  coldStartMs: number;
  coldStartCpuMs: number;
  scrapeMs: number;
  /** Service CPU time (ms, 10 ms ticks) of the first scrape. */
  scrapeCpuMs: number;
  scrapeCachedMs: number;
  /** Every scrape measured: uncached (the state read again, TTL expired) and cached ones. */
  scrapes: { uncached: ScrapeTime[]; cached: ScrapeTime[] };
  /** The longest probe wait over one second without a scrape (the machine's noise floor). */
  idleProbeMaxMs: number;
  redisBytes: number;
  rssBytes: number;
  /** Series and bytes of a scrape with the defaults (per-app queue gauges). */
  series: number;
  bytes: number;
  /** The same service with METRICS_PER_SHARD=true: its first (uncached) and a cached scrape, and RSS after them. */
  perShard: { series: number; bytes: number; scrapeMs: number; scrapeCpuMs: number; scrapeCachedMs: number; rssBytes: number };
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

function rssOf(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
  } catch {
    return Number.NaN;
  }
}

async function timedStart(env: BenchEnv, extra: NodeJS.ProcessEnv): Promise<{ server: ServerProc; ms: number; cpuMs: number }> {
  const t0 = Date.now();
  const server = await startService(env, undefined, extra, START_TIMEOUT_MS);
  return { server, ms: Date.now() - t0, cpuMs: (cpuMicros(server.child.pid) ?? Number.NaN) / 1000 };
}

interface ScrapeTime {
  /** Wall time of the scrape. */
  ms: number;
  /**
   * The longest wait of a `/health/live` probe sent back to back (one at a time) while the scrape
   * ran: about the longest time the service's event loop was held (a probe waits for it).
   */
  probeMaxMs: number;
  probes: number;
  /** Sample lines of the exposition (series), and its size. */
  series: number;
  bytes: number;
}

/** Sample lines of a Prometheus text exposition: one per series. */
function seriesOf(text: string): number {
  let n = 0;
  for (const line of text.split('\n')) {
    if (line !== '' && !line.startsWith('#')) {
      n++;
    }
  }
  return n;
}

/**
 * Back-to-back probes of /health/live until `stop()`: the longest one and how many. In a worker
 * thread, so the bench's own reading of the scrape (1.7 MB at 256 apps) does not delay a probe.
 */
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
let running = true;
let maxMs = 0;
let count = 0;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(workerData.url);
    await res.arrayBuffer();
    if (count === 0) {
      parentPort.postMessage('ready');
    } else {
      maxMs = Math.max(maxMs, Number(process.hrtime.bigint() - t0) / 1e6);
    }
    count++;
  }
  parentPort.postMessage({ maxMs, count: count - 1 });
})();
`;

/** Starts the probes; resolves once the first one was answered (the worker is up). */
async function startProbe(server: ServerProc): Promise<{ stop: () => Promise<{ maxMs: number; count: number }> }> {
  const worker = new Worker(PROBE_WORKER, { eval: true, workerData: { url: `http://127.0.0.1:${server.port}/health/live` } });
  const messages: unknown[] = [];
  let wake: (() => void) | null = null;
  worker.on('message', (m: unknown) => {
    messages.push(m);
    wake?.();
  });
  const next = async (): Promise<unknown> => {
    while (messages.length === 0) {
      await new Promise<void>((resolve, reject) => {
        wake = resolve;
        worker.once('error', reject);
      });
    }
    return messages.shift();
  };
  await next(); // 'ready'
  return {
    stop: async () => {
      worker.postMessage('stop');
      const result = (await next()) as { maxMs: number; count: number };
      await worker.terminate();
      return result;
    },
  };
}

async function scrape(server: ServerProc): Promise<ScrapeTime> {
  const probe = await startProbe(server);
  const t0 = process.hrtime.bigint();
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  const text = await res.text();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const { maxMs, count } = await probe.stop();
  return { ms, probeMaxMs: maxMs, probes: count, series: seriesOf(text), bytes: Buffer.byteLength(text) };
}

/** The service's METRICS_STATE_TTL_MS in this case: a scrape after it reads the state again. */
const STATE_TTL_MS = 5000;
/** Scrapes of each kind at each size. */
const SCRAPES = 3;

async function deleteLists(redis: Redis, env: BenchEnv, apps: Iterable<number>): Promise<void> {
  const keys: string[] = [];
  for (const app of apps) {
    for (let shard = 0; shard < 64; shard++) {
      keys.push(`${env.keyPrefix}idList_${app}_${shard}`);
    }
  }
  for (let i = 0; i < keys.length; i += 1000) {
    await redis.del(...keys.slice(i, i + 1000));
  }
}

/** Waits until every list of apps 1..apps-1 holds something again (the sweep that refills them ended). */
async function waitRefilled(redis: Redis, env: BenchEnv, apps: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pipeline = redis.pipeline();
    for (let app = 1; app < apps; app++) {
      for (let shard = 0; shard < 64; shard++) {
        pipeline.llen(`${env.keyPrefix}idList_${app}_${shard}`);
      }
    }
    const replies = (await pipeline.exec()) ?? [];
    if (replies.every(([err, len]) => !err && Number(len) > 0)) {
      return true;
    }
    await sleep(1000);
  }
  return false;
}

const COMMON_ENV = { QUEUE_RELOAD_CRON: 'off', LOG_LEVEL: 'warn', METRICS_STATE_TTL_MS: String(STATE_TTL_MS) };


/** A warm start with METRICS_PER_SHARD=true: an uncached scrape (its CPU time), a cached one, and the RSS after them. */
async function perShardScrape(env: BenchEnv): Promise<SizePoint['perShard']> {
  const { server } = await timedStart(env, { ...COMMON_ENV, QUEUE_REFILL_CRON: 'off', METRICS_PER_SHARD: 'true' });
  try {
    await sleep(1000);
    const cpu0 = cpuMicros(server.child.pid) ?? Number.NaN;
    const first = await scrape(server);
    const scrapeCpuMs = ((cpuMicros(server.child.pid) ?? Number.NaN) - cpu0) / 1000;
    const cached = await scrape(server);
    return { series: first.series, bytes: first.bytes, scrapeMs: first.ms, scrapeCpuMs, scrapeCachedMs: cached.ms, rssBytes: rssOf(server.child.pid) };
  } finally {
    await server.stop();
  }
}

export async function scaleCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  const sizes = opts.scaleApps ?? (opts.quick ? [4, 16, 64] : [16, 64, 256]);
  log(`scale: ${sizes.join(', ')} apps × 64 shards`);
  const redis = new Redis(env.redisUrl, { maxRetriesPerRequest: 1 });
  const baseline = await usedMemory(redis);
  const points: SizePoint[] = [];
  const rows: Row[] = [];
  let created = 0;
  try {
    for (const apps of sizes) {
      // Create the apps (admin API; crons off, so nothing is filled yet).
      const maker = await startService(env, undefined, { ...COMMON_ENV, QUEUE_REFILL_CRON: 'off' });
      try {
        for (let appId = created; appId < apps; appId++) {
          await admin(env, maker.port, 'POST', '/admin/apps', { appId, appName: `bench-scale-${appId}`, step: 1000 });
        }
      } finally {
        await maker.stop();
      }
      created = apps;
      // One sweep with every list empty, then one with every list full (in process, service code).
      const sweepOut = await runNode(
        [
          ...TS_NODE,
          `${ROOT}/scripts/bench/workers/scale-sweep.ts`,
          JSON.stringify({ databaseUrl: databaseUrl(env), redisUrl: env.redisUrl, keyPrefix: env.keyPrefix }),
        ],
        {},
        START_TIMEOUT_MS,
      );
      const sweep = JSON.parse(sweepOut.trim().split('\n').pop() ?? '{}') as SweepTimes;
      const redisBytes = (await usedMemory(redis)) - baseline;
      // Start-up with every list full, then a scrape (state read), then a cached one.
      const warm = await timedStart(env, { ...COMMON_ENV, QUEUE_REFILL_CRON: 'off' });
      let scrapeCpuMs: number;
      const scrapes: SizePoint['scrapes'] = { uncached: [], cached: [] };
      let rssBytes: number;
      let idleProbeMaxMs: number;
      try {
        const idle = await startProbe(warm.server);
        await sleep(1000);
        idleProbeMaxMs = (await idle.stop()).maxMs;
        const cpu0 = cpuMicros(warm.server.child.pid) ?? Number.NaN;
        scrapes.uncached.push(await scrape(warm.server));
        scrapeCpuMs = ((cpuMicros(warm.server.child.pid) ?? Number.NaN) - cpu0) / 1000;
        scrapes.cached.push(await scrape(warm.server));
        // More of each: cached right after, uncached once the state snapshot expired.
        for (let i = 1; i < SCRAPES; i++) {
          await sleep(STATE_TTL_MS + 200);
          scrapes.uncached.push(await scrape(warm.server));
          scrapes.cached.push(await scrape(warm.server));
        }
        // After every scrape: the largest the heap grew for them stays in the RSS.
        rssBytes = rssOf(warm.server.child.pid);
      } finally {
        await warm.server.stop();
      }
      const perShard = await perShardScrape(env);
      // Start-up with every list empty: the start-up sweep refills them all before listening.
      await deleteLists(redis, env, Array.from({ length: apps }, (_, i) => i));
      const cold = await timedStart(env, { ...COMMON_ENV, QUEUE_REFILL_CRON: 'off' });
      await cold.server.stop();
      const point: SizePoint = {
        apps,
        shards: apps * 64,
        sweep,
        warmStartMs: warm.ms,
        warmStartCpuMs: warm.cpuMs,
        coldStartMs: cold.ms,
        coldStartCpuMs: cold.cpuMs,
        scrapeMs: scrapes.uncached[0].ms,
        scrapeCpuMs,
        scrapeCachedMs: scrapes.cached[0].ms,
        scrapes,
        idleProbeMaxMs,
        redisBytes,
        rssBytes,
        series: scrapes.uncached[0].series,
        bytes: scrapes.uncached[0].bytes,
        perShard,
      };
      points.push(point);
      log(`  ${apps} apps: ${describe(point)}`);
    }
    rows.push(...sizeRows(points));
    rows.push(...(await duringSweep(opts, env, redis, sizes[sizes.length - 1], log)));
    return rows;
  } finally {
    redis.disconnect();
  }
}

/** Wall time, with CPU time (less sensitive to the machine's other load) in brackets. */
function describe(p: SizePoint): string {
  const ms = (wall: number, cpu: number): string => `${wall.toFixed(0)} ms (CPU ${cpu.toFixed(0)})`;
  return (
    `${p.shards} lists: sweep ${ms(p.sweep.fullMs, p.sweep.fullCpuMs)} all empty (${p.sweep.full.refilled} refilled), ` +
    `${ms(p.sweep.steadyMs, p.sweep.steadyCpuMs)} all full; start-up ${ms(p.warmStartMs, p.warmStartCpuMs)} lists full, ` +
    `${ms(p.coldStartMs, p.coldStartCpuMs)} lists empty; /metrics ${ms(p.scrapeMs, p.scrapeCpuMs)}, cached ` +
    `${p.scrapeCachedMs.toFixed(0)} ms; scrapes uncached ${scrapeList(p.scrapes.uncached)}, cached ` +
    `${scrapeList(p.scrapes.cached)} (a probe without scrape: up to ${p.idleProbeMaxMs.toFixed(0)}); ${p.series} series, ` +
    `${(p.bytes / 1024).toFixed(0)} KiB per scrape; Redis ${(p.redisBytes / 2 ** 20).toFixed(1)} MiB ` +
    `(${(p.redisBytes / p.shards / 1024).toFixed(1)} KiB/list); RSS ${(p.rssBytes / 2 ** 20).toFixed(1)} MiB; ` +
    `METRICS_PER_SHARD=true: ${p.perShard.series} series, ${(p.perShard.bytes / 1024).toFixed(0)} KiB, ` +
    `/metrics ${ms(p.perShard.scrapeMs, p.perShard.scrapeCpuMs)}, cached ${p.perShard.scrapeCachedMs.toFixed(0)} ms, ` +
    `RSS ${(p.perShard.rssBytes / 2 ** 20).toFixed(1)} MiB`
  );
}

/** `wall ms (longest probe wait ms)` of each scrape. */
function scrapeList(scrapes: readonly ScrapeTime[]): string {
  return scrapes.map((t) => `${t.ms.toFixed(0)} (block ${t.probeMaxMs.toFixed(0)})`).join(', ');
}

/** One row per size; the note of the largest says how each figure grew against the number of lists. */
function sizeRows(points: SizePoint[]): Row[] {
  const first = points[0];
  const last = points[points.length - 1];
  const growth = (f: (p: SizePoint) => number): string => {
    // Growth of the figure ÷ growth of the number of lists: ≤ 1 is linear or better.
    const g = f(last) / f(first) / (last.shards / first.shards);
    return g.toFixed(2);
  };
  return points.map((p): Row => {
    const note =
      describe(p) +
      (p === last && points.length > 1
        ? `; CPU growth ÷ lists growth (${first.shards} → ${last.shards}; ≤ 1 linear): sweep empty ${growth((x) => x.sweep.fullCpuMs)}, ` +
          `sweep full ${growth((x) => x.sweep.steadyCpuMs)}, start full ${growth((x) => x.warmStartCpuMs)}, ` +
          `start empty ${growth((x) => x.coldStartCpuMs)}, /metrics ${growth((x) => x.scrapeCpuMs)}, ` +
          `Redis memory ${growth((x) => x.redisBytes)}, RSS ${growth((x) => x.rssBytes)}`
        : '');
    return { case: `scale ${p.apps} apps × 64 shards`, subject: 'sweep, start-up, /metrics, memory', note };
  });
}

/**
 * p99 of queue gets on app 0 (64 shards; its own refills happen ahead of demand in both arms) while
 * the cron sweep refills every list of the other apps, against the same load while the sweeps find
 * every list full. Alternated, opts.runs rounds.
 */
async function duringSweep(opts: BenchOptions, env: BenchEnv, redis: Redis, apps: number, log: (s: string) => void): Promise<Row[]> {
  log(`  request path during a sweep of ${(apps - 1) * 64} lists`);
  const server = await startService(env, undefined, { ...COMMON_ENV, QUEUE_REFILL_CRON: '*/2 * * * * *' }, START_TIMEOUT_MS);
  const paths = gatePassPerShard().map((g) => `/api/id/${HOT_APP}?gatePass=${encodeURIComponent(g)}`);
  const quiet: LoadResult[] = [];
  const busy: LoadResult[] = [];
  const others = Array.from({ length: apps - 1 }, (_, i) => i + 1);
  try {
    await runLoad({ port: server.port, paths, connections: opts.connections, durationS: opts.warmupS });
    for (let i = 0; i < opts.runs; i++) {
      for (const withSweep of [false, true]) {
        if (withSweep) {
          // The next tick (≤ 2 s) finds every other list empty and refills them all.
          await deleteLists(redis, env, others);
        }
        const cpu0 = cpuMicros(server.child.pid);
        const r = await runLoad({ port: server.port, paths, connections: opts.connections, durationS: opts.durationS });
        const cpu1 = cpuMicros(server.child.pid);
        r.cpuUsPerReq = cpu0 !== undefined && cpu1 !== undefined && r.requests > 0 ? (cpu1 - cpu0) / r.requests : undefined;
        (withSweep ? busy : quiet).push(r);
        const refilled = withSweep ? await waitRefilled(redis, env, apps, START_TIMEOUT_MS) : true;
        log(
          `    ${withSweep ? 'during a refilling sweep' : 'sweeps find lists full'} run ${i + 1}: ${Math.round(r.reqPerSec)} req/s, ` +
            `p50 ${r.p50} ms, p99 ${r.p99} ms${refilled ? '' : ' (sweep did not finish)'}`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  const row = (subject: string, runs: LoadResult[]): Row => {
    const cpu = runs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    return {
      case: `scale ${apps} apps: queue get during a sweep`,
      subject,
      reqPerSec: median(runs.map((r) => r.reqPerSec)),
      idsPerSec: median(runs.map((r) => r.reqPerSec)),
      p50Ms: median(runs.map((r) => r.p50)),
      p99Ms: median(runs.map((r) => r.p99)),
      cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined,
      note: `p99 per run: ${runs.map((r) => r.p99).join(', ')} ms`,
    };
  };
  return [
    row(`GET /api/id/${HOT_APP}, sweeps find every list full`, quiet),
    row(`GET /api/id/${HOT_APP}, a sweep refilling ${others.length * 64} lists`, busy),
  ];
}
