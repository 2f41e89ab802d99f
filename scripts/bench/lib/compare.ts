import { cpuMicros } from './cpu';
import { Generator, LoadResult, median, medianRun, runLoadWith, wrkInstalled } from './load';
import { BenchOptions } from './options';
import { ServerProc } from './proc';
import { Row } from './table';

export interface Subject {
  server: ServerProc;
  paths: string[];
  /** Runs before each measured run (e.g. topping up the queue lists); not timed. */
  before?: () => Promise<void>;
}

/** The generators of this bench run: `--load`, else autocannon and wrk when wrk is installed. */
export function generators(opts: BenchOptions): Generator[] {
  const wanted = opts.generators ?? ['autocannon', 'wrk'];
  const usable = wanted.filter((g) => g !== 'wrk' || wrkInstalled() !== null);
  return usable.length > 0 ? usable : ['autocannon'];
}

/**
 * Warms every subject up, then alternates measured runs so drift on the machine hits all subjects
 * alike: round i runs every subject under the first generator, then every subject under the next
 * (A·autocannon, B·autocannon, A·wrk, B·wrk, then round i+1). Returns per subject the median run of
 * the first generator (`runs`: every run of it) with the other generator's median in `wrk`.
 */
export async function measure(opts: BenchOptions, subjects: Subject[], log: (s: string) => void): Promise<LoadResult[]> {
  const gens = generators(opts);
  for (const s of subjects) {
    await s.before?.();
    await runLoadWith({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.warmupS, generator: gens[0] });
  }
  const runs: LoadResult[][][] = gens.map(() => subjects.map(() => []));
  for (let i = 0; i < opts.runs; i++) {
    for (const [g, generator] of gens.entries()) {
      for (const [k, s] of subjects.entries()) {
        await s.before?.();
        const cpu0 = cpuMicros(s.server.child.pid);
        const r = await runLoadWith({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.durationS, generator });
        const cpu1 = cpuMicros(s.server.child.pid);
        if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
          r.cpuUsPerReq = (cpu1 - cpu0) / r.requests;
        }
        r.generator = generator;
        const bad = r.non2xx + r.errors + r.timeouts;
        log(
          `  ${s.server.name} run ${i + 1} (${generator}): ${Math.round(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms` +
            `${r.cpuUsPerReq === undefined ? '' : `, ${r.cpuUsPerReq.toFixed(1)} µs CPU/req`}${bad > 0 ? `, ${bad} failed` : ''}`,
        );
        runs[g][k].push(r);
      }
    }
  }
  const summarise = (rs: LoadResult[]): LoadResult => {
    const cpu = rs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    return { ...medianRun(rs), cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined, runs: rs };
  };
  return subjects.map((_, k) => {
    const first = summarise(runs[0][k]);
    const wrkAt = gens.indexOf('wrk');
    return wrkAt > 0 ? { ...first, wrk: summarise(runs[wrkAt][k]) } : first;
  });
}

/**
 * Subject against ceiling, measured alternately: the median over rounds of each round's ratio
 * (subject req/s ÷ the ceiling's req/s in the same round; ceiling CPU/req ÷ subject CPU/req), which
 * drift between rounds moves less than a ratio of medians. Falls back to medians without rounds.
 */
export function versus(subject: LoadResult, ceiling: LoadResult): { ratio: number; cpuRatio?: number } {
  const a = subject.runs ?? [subject];
  const b = ceiling.runs ?? [ceiling];
  const n = Math.min(a.length, b.length);
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < n; i++) {
    ratios.push(a[i].reqPerSec / b[i].reqPerSec);
    const sc = a[i].cpuUsPerReq;
    const cc = b[i].cpuUsPerReq;
    if (sc !== undefined && cc !== undefined && sc > 0) {
      cpuRatios.push(cc / sc);
    }
  }
  return { ratio: median(ratios), cpuRatio: cpuRatios.length > 0 ? median(cpuRatios) : undefined };
}

/** Failed requests of a run, for the notes column. */
export function failures(r: LoadResult): string {
  const bad = r.non2xx + r.errors + r.timeouts;
  return bad > 0 ? `${bad} failed requests in the median run` : '';
}

/** What a comparison row needs besides the figures. */
export interface HttpRowSpec {
  case: string;
  subject: string;
  /** IDs per request (batch size), 1 unless given. */
  idsPerRequest?: number;
  ceiling?: { result: LoadResult; name: string };
  /** Met when the req/s ratio AND the CPU ratio (when known) reach `min`. */
  target?: { min: number; text: string };
  note?: string;
}

/**
 * One table row per load generator for a subject (autocannon, then wrk when it ran): req/s, latency,
 * CPU per request and, against a ceiling, the per-round median ratios.
 */
export function httpRows(spec: HttpRowSpec, result: LoadResult): Row[] {
  const perGenerator: Array<[LoadResult, LoadResult | undefined]> = [[result, spec.ceiling?.result]];
  if (result.wrk !== undefined) {
    perGenerator.push([result.wrk, spec.ceiling?.result.wrk]);
  }
  return perGenerator.map(([r, c]) => {
    const vs = c === undefined ? undefined : versus(r, c);
    const met =
      vs === undefined || spec.target === undefined
        ? undefined
        : vs.ratio >= spec.target.min && (vs.cpuRatio === undefined || vs.cpuRatio >= spec.target.min);
    return {
      case: spec.case,
      subject: spec.subject,
      load: r.generator ?? 'autocannon',
      reqPerSec: r.reqPerSec,
      idsPerSec: r.reqPerSec * (spec.idsPerRequest ?? 1),
      p50Ms: r.p50,
      p99Ms: r.p99,
      cpuUsPerReq: r.cpuUsPerReq,
      ratio: vs?.ratio,
      cpuRatio: vs?.cpuRatio,
      ceiling: spec.ceiling?.name,
      target: spec.target?.text,
      met,
      note: [spec.note, failures(r)].filter((s) => s).join('; '),
    };
  });
}
