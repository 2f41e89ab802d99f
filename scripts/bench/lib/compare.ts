import { cpuReader, watchOthers } from './cpu';
import { Generator, LoadResult, median, medianRun, runLoadWith, wrkInstalled } from './load';
import { BenchOptions } from './options';
import { placement } from './placement';
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
 * A round of one generator is "clean" when other processes took at most this share of the pinned
 * servers' CPU during every run of it. Unpinned, every round is clean (nothing to compare with).
 */
export const MAX_OTHERS_ON_SERVER_CPU = 0.25;
/** Rounds run at most: this many times `rounds`, when too few rounds are clean. */
const MAX_ROUNDS_FACTOR = 2;

/**
 * Warms every subject up, then alternates measured runs so drift on the machine hits all subjects
 * alike: round i runs every subject under the first generator, then every subject under the next
 * (A·autocannon, B·autocannon, A·wrk, B·wrk), and the next round in the reverse order (B·autocannon,
 * A·autocannon, B·wrk, A·wrk): each subject's run is next to its ceiling's (put a ceiling shared by
 * two subjects between them) and neither is always first. Rounds go on until each generator has
 * `rounds` clean rounds (MAX_OTHERS_ON_SERVER_CPU), at most MAX_ROUNDS_FACTOR × `rounds`. Returns
 * per subject the median run of the first generator (`runs`: its runs of the clean rounds, or of
 * every round when fewer than minCleanRounds were clean, by round) with the other generator's in
 * `wrk`.
 */
export async function measure(opts: BenchOptions, subjects: Subject[], log: (s: string) => void): Promise<LoadResult[]> {
  const gens = generators(opts);
  for (const s of subjects) {
    await s.before?.();
    await runLoadWith({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.roundsWarmupS, generator: gens[0] });
  }
  /** blocks[g]: the rounds of generator g, each one run per subject (index k). */
  const blocks: LoadResult[][][] = gens.map(() => []);
  const cleanCount = (g: number): number => blocks[g].filter(isClean).length;
  for (let i = 0; i < opts.rounds * MAX_ROUNDS_FACTOR; i++) {
    const pending = gens.map((_, g) => g).filter((g) => cleanCount(g) < opts.rounds);
    if (pending.length === 0) {
      break;
    }
    const order = roundOrder(i, subjects.length);
    for (const g of pending) {
      const block: LoadResult[] = [];
      for (const k of order) {
        const s = subjects[k];
        await s.before?.();
        const r = await measuredRun(opts, s, gens[g]);
        const bad = r.non2xx + r.errors + r.timeouts;
        log(
          `  ${s.server.name} run ${i + 1} (${gens[g]}): ${Math.round(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms` +
            `${r.cpuUsPerReq === undefined ? '' : `, ${r.cpuUsPerReq.toFixed(1)} µs CPU/req`}` +
            `${r.othersOnServerCpu === undefined ? '' : `, others on its CPU ${pct(r.othersOnServerCpu)}`}${bad > 0 ? `, ${bad} failed` : ''}`,
        );
        block[k] = r;
      }
      blocks[g].push(block);
      if (!isClean(block)) {
        log(`  round ${i + 1} (${gens[g]}) not clean: others took more than ${pct(MAX_OTHERS_ON_SERVER_CPU)} of the servers' CPU`);
      }
    }
  }
  const summarise = (g: number, k: number): LoadResult => {
    const clean = blocks[g].filter(isClean);
    const judged = clean.length >= minCleanRounds(opts.rounds);
    const rs = (judged ? clean : blocks[g]).map((b) => b[k]);
    const cpu = rs.map((r) => r.cpuUsPerReq).filter((c): c is number => c !== undefined);
    const others = rs.map((r) => r.othersOnServerCpu).filter((c): c is number => c !== undefined);
    return {
      ...medianRun(rs),
      cpuUsPerReq: cpu.length > 0 ? median(cpu) : undefined,
      othersOnServerCpu: others.length > 0 ? median(others) : undefined,
      runs: rs,
      rounds: { clean: clean.length, all: blocks[g].length, judged },
    };
  };
  return subjects.map((_, k) => {
    const first = summarise(0, k);
    const wrkAt = gens.indexOf('wrk');
    return wrkAt > 0 ? { ...first, wrk: summarise(wrkAt, k) } : first;
  });
}

/**
 * Clean rounds needed for a verdict: half the rounds asked for. With fewer, the machine was too busy
 * to compare req/s (a median of one or two pairs is anybody's guess): every round is used and the
 * row's *met* is "?".
 */
export function minCleanRounds(rounds: number): number {
  return Math.ceil(rounds / 2);
}

/** Subjects' order in round i (0-based): 0…n-1, then reversed in every other round (ABBA). */
export function roundOrder(i: number, n: number): number[] {
  const forward = Array.from({ length: n }, (_, k) => k);
  return i % 2 === 0 ? forward : forward.reverse();
}

/** Every run of the round left the servers' CPU to the servers (MAX_OTHERS_ON_SERVER_CPU), or nothing was pinned. */
export function isClean(block: readonly LoadResult[]): boolean {
  return block.every((r) => r.othersOnServerCpu === undefined || r.othersOnServerCpu <= MAX_OTHERS_ON_SERVER_CPU);
}

/**
 * One measured run: the load, the server's CPU per request and, when the servers are pinned, the
 * share of the servers' CPUs that other processes (other people's work, MariaDB, the kernel; not
 * the local Redis of the request path) took meanwhile: with the server alone on its CPU that is
 * near 0. autocannon measures that share itself over its own load window (its start-up of ~0.5 s,
 * when the server idles and anybody may use its CPU, left out); for wrk (C, starts at once) the
 * window is the process's life.
 */
async function measuredRun(opts: BenchOptions, s: Subject, generator: Generator): Promise<LoadResult> {
  const cpu = cpuReader(s.server.child.pid);
  const { server: serverCpus, dependencyPids = [] } = placement();
  const watch =
    serverCpus !== undefined && s.server.child.pid !== undefined
      ? { serverPid: s.server.child.pid, cpus: serverCpus, dependencyPids }
      : undefined;
  const cpu0 = cpu();
  const others = watch === undefined ? undefined : watchOthers(watch);
  const r = await runLoadWith({ port: s.server.port, paths: s.paths, connections: opts.connections, durationS: opts.roundS, generator, watch });
  const cpu1 = cpu();
  const othersOverAll = others?.();
  if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
    r.cpuUsPerReq = (cpu1 - cpu0) / r.requests;
  }
  r.othersOnServerCpu ??= othersOverAll;
  r.generator = generator;
  return r;
}

function pct(share: number): string {
  return `${Math.round(share * 100)} %`;
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

/** Clean rounds of a pinned comparison, for the notes column ('' when nothing was pinned). */
export function roundsNote(r: LoadResult): string {
  if (r.rounds === undefined || r.othersOnServerCpu === undefined) {
    return '';
  }
  const used = r.rounds.judged
    ? `${r.rounds.clean} clean rounds of ${r.rounds.all}`
    : `only ${r.rounds.clean} clean rounds of ${r.rounds.all}: all used, no verdict (busy machine)`;
  return `${used}; others on the server CPU ${pct(r.othersOnServerCpu)} (median)`;
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
        : r.rounds?.judged === false || c?.rounds?.judged === false
          ? 'unknown'
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
      note: [spec.note, roundsNote(r), failures(r)].filter((s) => s).join('; '),
    };
  });
}
