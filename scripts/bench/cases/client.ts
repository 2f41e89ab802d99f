import { BenchEnv, admin } from '../lib/bench-env';
import { BenchOptions } from '../lib/options';
import { ROOT, TS_NODE, runCommand, runNode } from '../lib/proc';
import { startService } from '../lib/service';
import { Row } from '../lib/table';
import type { ClientRate, Mode } from '../workers/client-rate';

const TARGET = 10_000_000;
/** Queue IDs one by one, against a bare bigint counter in the same loops, run and process. */
const COUNTER_TARGETS: Partial<Record<Mode, number>> = { 'client one by one (await)': 0.95, 'client one by one (sync try)': 0.9 };
/** The worker's bare counter of each (as its COUNTER_OF). */
const COUNTER_OF: Partial<Record<Mode, Mode>> = { 'client one by one (await)': 'bare counter (await)', 'client one by one (sync try)': 'bare counter (sync)' };

/**
 * IDs per second in one client process (@shardleaf/client, IDs handed out from leases) for each
 * generator, against the same process calling the plain HTTP routes, measured alternately in one
 * run; and the server's CPU per ID at that rate (the service's process CPU time over the IDs the
 * client took). Target: ≥ 10M ids/s for segment and queue in-process (batches of 1000). And queue
 * IDs one by one against a bare bigint counter in the same loops: `await queueId` ≥ 0.95 of an
 * awaited counter, `tryQueueId` ≥ 0.9 of a counter (median of the runs' ratios; in each run
 * counter and client alternate in 25-ms slices, the worker's header says how).
 *
 * The client measured is the built package (packages/client/dist, built here with its own
 * tsconfig.build.json: the files `npm pack` ships), as a caller installs it.
 */
export async function clientCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('client: @shardleaf/client in-process vs plain HTTP');
  log('client: building packages/client/dist (what npm pack ships)');
  await runCommand(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', `${ROOT}/packages/client/tsconfig.build.json`], {}, 300_000);
  const service = await startService(env, opts.profileDir);
  try {
    await admin(env, service.port, 'POST', '/admin/apps', { appId: 9, appName: 'bench-client', step: 1000 });
    await admin(env, service.port, 'POST', '/admin/segment/tags', { tag: 'bench-client', step: 1000 });
    const spec = {
      clientDir: `${ROOT}/packages/client/dist`,
      baseUrl: `http://127.0.0.1:${service.port}`,
      servicePid: service.child.pid,
      appId: 9,
      gatePass: 'alice',
      tag: 'bench-client',
      snowflakeKey: 'bench-client',
      seconds: opts.quick ? 1 : 2,
      runs: opts.runs,
      warmupSeconds: opts.warmupS,
    };
    const out = await runNode([...TS_NODE, `${ROOT}/scripts/bench/workers/client-rate.ts`, JSON.stringify(spec)], {}, 900_000);
    const rates = JSON.parse(out.trim().split('\n').pop() ?? '[]') as ClientRate[];
    const counterRows: Row[] = [];
    for (const r of rates) {
      const target = COUNTER_TARGETS[r.mode];
      if (r.generator !== 'queue' || target === undefined || r.counterRatio === undefined) {
        continue;
      }
      const bare = rates.find((x) => x.generator === 'queue' && x.mode === COUNTER_OF[r.mode]);
      const perRun = (r.counterRatios ?? []).map((x) => x.toFixed(3)).join(', ');
      log(`client: queue ${r.mode} ÷ ${COUNTER_OF[r.mode]}: median ${r.counterRatio.toFixed(3)} (runs ${perRun}), target ≥ ${target}`);
      counterRows.push({
        case: 'client queue vs counter',
        subject: r.mode,
        idsPerSec: r.idsPerSec,
        ratio: r.counterRatio,
        ceiling: `${COUNTER_OF[r.mode]} (${bare === undefined ? '?' : fmtRate(bare.idsPerSec)} ids/s)`,
        target: `≥ ${target}`,
        met: r.counterRatio >= target,
        note: `median of ${r.counterRatios?.length ?? 0} runs of interleaved slices, per run ${perRun}; client CPU ${fmtNs(r.clientCpuNsPerId)}/ID` +
          (bare === undefined ? '' : `, counter ${fmtNs(bare.clientCpuNsPerId)}/ID`) + `; load ${r.load1.toFixed(2)}`,
      });
    }
    const rows = rates.filter((r) => !r.mode.startsWith('bare')).map((r): Row => {
      const inProcess = r.mode.startsWith('client');
      const targeted = r.mode === 'client batch 1000' && r.generator !== 'snowflake';
      const http = rates.find((x) => x.generator === r.generator && x.mode === 'HTTP GET, 1 ID per request');
      // What one core would do if this process had it alone: robust on a loaded, shared machine.
      const cpuBound = r.clientCpuNsPerId > 0 ? 1e9 / r.clientCpuNsPerId : undefined;
      const metWall = r.idsPerSec >= TARGET;
      const metCpu = cpuBound !== undefined && cpuBound >= TARGET;
      return {
        case: `client ${r.generator}`,
        subject: r.mode,
        reqPerSec: r.requestsPerSec,
        idsPerSec: r.idsPerSec,
        ratio: http && inProcess ? r.idsPerSec / http.idsPerSec : undefined,
        ceiling: http && inProcess ? 'HTTP, 1 ID per request' : undefined,
        target: targeted ? '≥ 10M ids/s' : undefined,
        met: targeted ? metWall || metCpu : undefined,
        note:
          (targeted && !metWall && metCpu ? 'met on the CPU-bound rate, not on wall clock; ' : '') +
          `CPU-bound ${cpuBound === undefined ? '?' : fmtRate(cpuBound)} ids/s (1 / client CPU per ID); ` +
          `server CPU ${fmtNs(r.serverCpuNsPerId)}/ID, client CPU ${fmtNs(r.clientCpuNsPerId)}/ID` +
          (inProcess ? `; req/s = leases (or snowflake batches) fetched per second` : '') +
          (r.generator === 'snowflake' && inProcess ? '; snowflake: batches of ≤ 1000 over HTTP, no lease' : '') +
          `; load ${r.load1.toFixed(2)}`,
      };
    });
    return [...rows, ...counterRows];
  } finally {
    await service.stop();
  }
}

function fmtRate(perSec: number): string {
  return perSec >= 1e6 ? `${(perSec / 1e6).toFixed(1)}M` : perSec >= 1e3 ? `${(perSec / 1e3).toFixed(1)}k` : perSec.toFixed(0);
}

function fmtNs(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(ns < 10 ? 2 : 0)} ns`;
}
