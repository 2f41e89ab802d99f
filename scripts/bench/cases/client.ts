import { BenchEnv, admin } from '../lib/bench-env';
import { BenchOptions } from '../lib/options';
import { ROOT, TS_NODE, runNode } from '../lib/proc';
import { startService } from '../lib/service';
import { Row } from '../lib/table';
import type { ClientRate } from '../workers/client-rate';

const TARGET = 10_000_000;

/**
 * IDs per second in one client process (@shardleaf/client, IDs handed out from leases) for each
 * generator, against the same process calling the plain HTTP routes, measured alternately in one
 * run; and the server's CPU per ID at that rate (the service's process CPU time over the IDs the
 * client took). Target: ≥ 10M ids/s for segment and queue in-process (batches of 1000).
 */
export async function clientCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('client: @shardleaf/client in-process vs plain HTTP');
  const service = await startService(env, opts.profileDir);
  try {
    await admin(env, service.port, 'POST', '/admin/apps', { appId: 9, appName: 'bench-client', step: 1000 });
    await admin(env, service.port, 'POST', '/admin/segment/tags', { tag: 'bench-client', step: 1000 });
    const spec = {
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
    return rates.map((r): Row => {
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
