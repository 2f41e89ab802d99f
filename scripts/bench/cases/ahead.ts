import { cpuMicros } from '../lib/cpu';
import { BenchEnv, admin } from '../lib/bench-env';
import { failures } from '../lib/compare';
import { LoadResult, median, medianRun, runLoad } from '../lib/load';
import { BenchOptions } from '../lib/options';
import { ServerProc } from '../lib/proc';
import { startService } from '../lib/service';
import { Row, cpuRatio } from '../lib/table';
import { gatePassPerShard } from './queue';

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
async function alternate(opts: BenchOptions, shape: Shape, subjects: Subject[], log: (s: string) => void): Promise<Measured[]> {
  for (const s of subjects) {
    await runLoad({ port: s.server.port, paths: shape.paths(s.appId), connections: opts.connections, durationS: opts.warmupS });
  }
  const runs: LoadResult[][] = subjects.map(() => []);
  const demand = subjects.map(() => 0);
  const ahead = subjects.map(() => 0);
  for (let i = 0; i < opts.runs; i++) {
    for (const [k, s] of subjects.entries()) {
      const d0 = await refills(s.server, 'demand');
      const a0 = await refills(s.server, 'ahead');
      const cpu0 = cpuMicros(s.server.child.pid);
      const r = await runLoad({ port: s.server.port, paths: shape.paths(s.appId), connections: opts.connections, durationS: opts.durationS });
      const cpu1 = cpuMicros(s.server.child.pid);
      if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
        r.cpuUsPerReq = (cpu1 - cpu0) / r.requests;
      }
      const d = (await refills(s.server, 'demand')) - d0;
      const a = (await refills(s.server, 'ahead')) - a0;
      demand[k] += d;
      ahead[k] += a;
      const bad = r.non2xx + r.errors + r.timeouts;
      log(
        `  ${shape.name} ${s.label} run ${i + 1}: ${Math.round(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
          `${d} demand / ${a} ahead refills${bad > 0 ? `, ${bad} failed` : ''}`,
      );
      runs[k].push(r);
    }
  }
  return runs.map((rs, k) => {
    const cpu = rs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    return { result: { ...medianRun(rs), cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined }, demand: demand[k], ahead: ahead[k] };
  });
}

/**
 * Issue 16: the seed's default step (1,000) against step 100,000 on one service (refill-ahead and
 * the adaptive size on, as configured by default), one hot shard and 64 shards spread, alternated
 * in the same run; plus step 1,000 on a second service with both off (the model before).
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
  try {
    await admin(env, service.port, 'POST', '/admin/apps', { appId: SMALL_APP, appName: 'bench-step-1k', step: 1000 });
    await admin(env, service.port, 'POST', '/admin/apps', { appId: LARGE_APP, appName: 'bench-step-100k', step: 100_000 });
    await admin(env, old.port, 'POST', '/admin/apps', { appId: OLD_APP, appName: 'bench-step-1k-old', step: 1000 });
    for (const shape of SHAPES) {
      const [small, large, before] = await alternate(
        opts,
        shape,
        [
          { label: 'step 1,000', server: service, appId: SMALL_APP },
          { label: 'step 100,000', server: service, appId: LARGE_APP },
          { label: 'step 1,000 ahead off', server: old, appId: OLD_APP },
        ],
        log,
      );
      const ratio = small.result.reqPerSec / large.result.reqPerSec;
      const row = (subject: string, m: Measured, extra: Partial<Row> = {}): Row => ({
        case: `refill ahead, ${shape.name}`,
        subject,
        reqPerSec: m.result.reqPerSec,
        idsPerSec: m.result.reqPerSec,
        p50Ms: m.result.p50,
        p99Ms: m.result.p99,
        cpuUsPerReq: m.result.cpuUsPerReq,
        note: [`${m.demand} demand / ${m.ahead} ahead refills in ${opts.runs} runs`, failures(m.result)].filter(Boolean).join('; '),
        ...extra,
      });
      rows.push(
        row('step 1,000 (refill ahead, adaptive size)', small, {
          ratio,
          cpuRatio: cpuRatio(small.result, large.result),
          ceiling: 'step 100,000',
          target: '≥ 0.95, 0 demand',
          met: ratio >= 0.95 && small.demand === 0,
        }),
        row('step 100,000', large),
        row('step 1,000, QUEUE_REFILL_AHEAD=false (before)', before, {
          ratio: before.result.reqPerSec / large.result.reqPerSec,
          cpuRatio: cpuRatio(before.result, large.result),
          ceiling: 'step 100,000',
        }),
      );
    }
    return rows;
  } finally {
    await service.stop();
    await old.stop();
  }
}
