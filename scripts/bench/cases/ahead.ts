import { cpuMicros } from '../lib/cpu';
import { BenchEnv, admin } from '../lib/bench-env';
import { failures } from '../lib/compare';
import { LoadResult, median, medianRun, runLoad } from '../lib/load';
import { BenchOptions } from '../lib/options';
import { ServerProc } from '../lib/proc';
import { startService } from '../lib/service';
import { Row, cpuRatio } from '../lib/table';
import Redis from 'ioredis';
import { gatePassPerShard, topUp } from './queue';

/** Apps of this case: the seed's default step against a step at which no refill happens in a run. */
const SMALL_APP = 31;
const LARGE_APP = 32;
/** The same small step on a service with refill-ahead and the adaptive size off (the old model). */
const OLD_APP = 33;

interface Shape {
  name: string;
  paths: (appId: number) => string[];
}

const SHAPES: Shape[] = [
  { name: 'one hot shard', paths: (appId) => [`/api/id/${appId}?gatePass=${encodeURIComponent(gatePassPerShard()[0])}`] },
  {
    name: '64 shards spread',
    paths: (appId) => gatePassPerShard().map((g) => `/api/id/${appId}?gatePass=${encodeURIComponent(g)}`),
  },
];

interface Subject {
  label: string;
  server: ServerProc;
  appId: number;
}

interface Measured {
  result: LoadResult;
  /** Demand (request waited) and ahead refills during the measured runs (all runs, summed). */
  demand: number;
  ahead: number;
  /** Every measured run, in order (run i of each subject was taken in the same round). */
  runs: LoadResult[];
  /** Redis CPU per request (µs) during the runs, median; undefined when Redis is not on this host. */
  redisUsPerReq?: number;
}

/** Redis's own CPU time so far (µs): INFO cpu, used_cpu_user + used_cpu_sys. */
async function redisCpuMicros(redis: Redis): Promise<number | undefined> {
  try {
    const info = await redis.info('cpu');
    const user = /used_cpu_user:([0-9.]+)/.exec(info);
    const sys = /used_cpu_sys:([0-9.]+)/.exec(info);
    return user && sys ? (Number(user[1]) + Number(sys[1])) * 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/** Median over rounds of subject ÷ reference taken in the same round (load drifts between rounds). */
function pairedMedian(subject: readonly number[], reference: readonly number[]): number {
  const ratios = subject.map((v, i) => v / reference[i]).filter((r) => Number.isFinite(r));
  return ratios.length > 0 ? median(ratios) : Number.NaN;
}

/** `shardleaf_queue_refills_total{trigger=…,outcome="refilled"}` of a service. */
async function refills(server: ServerProc, trigger: 'demand' | 'ahead'): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  const text = await res.text();
  const m = new RegExp(`^shardleaf_queue_refills_total\\{trigger="${trigger}",outcome="refilled"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Warm-up run per subject, then alternated measured runs (A, B, C, A, B, C, …); the refill
 * counters are read around each measured run, so the demand count is that subject's, after its
 * warm-up (the steady state).
 */
async function alternate(
  opts: BenchOptions,
  shape: Shape,
  subjects: Subject[],
  redis: Redis,
  log: (s: string) => void,
): Promise<Measured[]> {
  // Warm-up: long enough for a hot shard's refill size to grow (1,000 → 64,000 takes ~127,000 IDs).
  for (const s of subjects) {
    await runLoad({ port: s.server.port, paths: shape.paths(s.appId), connections: opts.connections, durationS: 2 * opts.warmupS });
  }
  const runs: LoadResult[][] = subjects.map(() => []);
  const redisCpu: number[][] = subjects.map(() => []);
  const demand = subjects.map(() => 0);
  const ahead = subjects.map(() => 0);
  for (let i = 0; i < opts.runs; i++) {
    for (const [k, s] of subjects.entries()) {
      const d0 = await refills(s.server, 'demand');
      const a0 = await refills(s.server, 'ahead');
      const cpu0 = cpuMicros(s.server.child.pid);
      const rcpu0 = await redisCpuMicros(redis);
      const r = await runLoad({ port: s.server.port, paths: shape.paths(s.appId), connections: opts.connections, durationS: opts.durationS });
      const cpu1 = cpuMicros(s.server.child.pid);
      const rcpu1 = await redisCpuMicros(redis);
      if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
        r.cpuUsPerReq = (cpu1 - cpu0) / r.requests;
      }
      if (rcpu0 !== undefined && rcpu1 !== undefined && r.requests > 0) {
        redisCpu[k].push((rcpu1 - rcpu0) / r.requests);
      }
      const d = (await refills(s.server, 'demand')) - d0;
      const a = (await refills(s.server, 'ahead')) - a0;
      demand[k] += d;
      ahead[k] += a;
      const bad = r.non2xx + r.errors + r.timeouts;
      log(
        `  ${shape.name} ${s.label} run ${i + 1}: ${Math.round(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
          `CPU ${r.cpuUsPerReq?.toFixed(1) ?? '?'} µs/req, ${d} demand / ${a} ahead refills${bad > 0 ? `, ${bad} failed` : ''}`,
      );
      runs[k].push(r);
    }
  }
  return runs.map((rs, k) => {
    const cpu = rs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    return {
      result: { ...medianRun(rs), cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined },
      demand: demand[k],
      ahead: ahead[k],
      runs: rs,
      redisUsPerReq: redisCpu[k].length > 0 ? median(redisCpu[k]) : undefined,
    };
  });
}

/**
 * Issue 16: the seed's default step (1,000) against step 100,000 on one service (refill-ahead and
 * the adaptive size on, as configured by default), one hot shard and 64 shards spread, alternated
 * in the same run; plus step 1,000 on a second service with both off (the model before). Every list
 * gets its first fill before any load; a warm-up of 2 × warmupS per subject; *ratio* and *CPU
 * ratio* of the step-1,000 row are medians of the per-round ratios (runs of the same round are
 * seconds apart); demand refills are counted during the measured runs only (the steady state).
 * Redis CPU per request is read from INFO (meaningful with a Redis of the bench's own:
 * BENCH_REDIS_URL).
 */
export async function aheadCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('queue refill ahead: step 1,000 vs step 100,000');
  const service = await startService(env, opts.profileDir);
  const old = await startService(env, undefined, {
    QUEUE_REFILL_AHEAD: 'false',
    QUEUE_REFILL_MAX_SIZE: '1',
    SNOWFLAKE_WORKER_ID: '2',
  });
  const rows: Row[] = [];
  const redis = new Redis(env.redisUrl, { maxRetriesPerRequest: 1 });
  try {
    await admin(env, service.port, 'POST', '/admin/apps', { appId: SMALL_APP, appName: 'bench-step-1k', step: 1000 });
    await admin(env, service.port, 'POST', '/admin/apps', { appId: LARGE_APP, appName: 'bench-step-100k', step: 100_000 });
    await admin(env, old.port, 'POST', '/admin/apps', { appId: OLD_APP, appName: 'bench-step-1k-old', step: 1000 });
    // The first fill of every list (64 × 100,000 entries for the large step) is not the steady
    // state: done here, before any load, so it cannot spill into the measured runs.
    await topUp(env, service.port, LARGE_APP, 50_000);
    await topUp(env, service.port, SMALL_APP, 500);
    await topUp(env, old.port, OLD_APP, 500);
    for (const shape of SHAPES) {
      const [small, large, before] = await alternate(
        opts,
        shape,
        [
          { label: 'step 1,000', server: service, appId: SMALL_APP },
          { label: 'step 100,000', server: service, appId: LARGE_APP },
          { label: 'step 1,000 ahead off', server: old, appId: OLD_APP },
        ],
        redis,
        log,
      );
      // Ratios of runs taken in the same round, then the median: load that drifts between rounds
      // hits both subjects of a round alike.
      const ratio = pairedMedian(
        small.runs.map((r) => r.reqPerSec),
        large.runs.map((r) => r.reqPerSec),
      );
      const cpuPaired = pairedMedian(
        large.runs.map((r) => r.cpuUsPerReq ?? Number.NaN),
        small.runs.map((r) => r.cpuUsPerReq ?? Number.NaN),
      );
      const row = (subject: string, m: Measured, extra: Partial<Row> = {}): Row => ({
        case: `refill ahead, ${shape.name}`,
        subject,
        reqPerSec: m.result.reqPerSec,
        idsPerSec: m.result.reqPerSec,
        p50Ms: m.result.p50,
        p99Ms: m.result.p99,
        cpuUsPerReq: m.result.cpuUsPerReq,
        note: [
          `${m.demand} demand / ${m.ahead} ahead refills in ${opts.runs} runs`,
          m.redisUsPerReq === undefined ? '' : `Redis ${m.redisUsPerReq.toFixed(1)} µs/req`,
          failures(m.result),
        ]
          .filter(Boolean)
          .join('; '),
        ...extra,
      });
      rows.push(
        row('step 1,000 (refill ahead, adaptive size)', small, {
          ratio,
          cpuRatio: cpuPaired,
          ceiling: 'step 100,000',
          target: '≥ 0.95, 0 demand',
          met: ratio >= 0.95 && small.demand === 0,
        }),
        row('step 100,000', large),
        row('step 1,000, QUEUE_REFILL_AHEAD=false (before)', before, {
          ratio: pairedMedian(
            before.runs.map((r) => r.reqPerSec),
            large.runs.map((r) => r.reqPerSec),
          ),
          cpuRatio: cpuRatio(before.result, large.result),
          ceiling: 'step 100,000',
        }),
      );
    }
    return rows;
  } finally {
    redis.disconnect();
    await service.stop();
    await old.stop();
  }
}
