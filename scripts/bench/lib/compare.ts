import { cpuMicros } from './cpu';
import { LoadResult, median, medianRun, runLoad } from './load';
import { BenchOptions } from './options';
import { ServerProc } from './proc';

export interface Subject {
  server: ServerProc;
  paths: string[];
  /** Runs before each measured run (e.g. topping up the queue lists); not timed. */
  before?: () => Promise<void>;
}

/**
 * Warms every subject up, then alternates measured runs (A, B, A, B, …) so drift on the machine
 * hits all subjects alike. Returns the median run of each subject.
 */
export async function measure(opts: BenchOptions, subjects: Subject[], log: (s: string) => void): Promise<LoadResult[]> {
  for (const s of subjects) {
    await s.before?.();
    await runLoad({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.warmupS });
  }
  const runs: LoadResult[][] = subjects.map(() => []);
  for (let i = 0; i < opts.runs; i++) {
    for (const [k, s] of subjects.entries()) {
      await s.before?.();
      const cpu0 = cpuMicros(s.server.child.pid);
      const r = await runLoad({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.durationS });
      const cpu1 = cpuMicros(s.server.child.pid);
      if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
        r.cpuUsPerReq = (cpu1 - cpu0) / r.requests;
      }
      const bad = r.non2xx + r.errors + r.timeouts;
      log(
        `  ${s.server.name} run ${i + 1}: ${Math.round(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms` +
          `${r.cpuUsPerReq === undefined ? '' : `, ${r.cpuUsPerReq.toFixed(1)} µs CPU/req`}${bad > 0 ? `, ${bad} failed` : ''}`,
      );
      runs[k].push(r);
    }
  }
  return runs.map((rs) => {
    const cpu = rs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    return { ...medianRun(rs), cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined };
  });
}

/** Failed requests of a run, for the notes column. */
export function failures(r: LoadResult): string {
  const bad = r.non2xx + r.errors + r.timeouts;
  return bad > 0 ? `${bad} failed requests in the median run` : '';
}
