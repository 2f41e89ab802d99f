import { join } from 'node:path';

/**
 * Two `--cpu-prof` profiles of servers under the same HTTP load (the service and its ceiling,
 * `queue-cpu-split.ts` with PROFILE_DIR), compared function by function in µs per request.
 *
 * Only the load windows count: the profile is cut into windows of `windowMs`, and a window counts
 * when at least `minBusy` of its samples are not idle, at least `minHttp` of them have their self
 * frame in Node's HTTP code (`node:_http_*`), and none has it in module loading or TypeScript's
 * compiler (the start, or a ceiling's transpile on require). Each function's self time within
 * them is divided by the requests the server answered (queue-cpu-split.ts prints them by pid): the
 * windows hold the warm-up run and every round, so the requests to divide by are all of the run's.
 *
 * What a profile calls `(idle)` is not all idle: Node marks the whole poll phase of its event loop
 * idle and clears the mark only when JavaScript runs, so native work in an I/O callback outside
 * JavaScript (reading the socket, llhttp's parsing) is sampled as idle. That CPU is in no row; the
 * CLI prints the busy time per request beside the CPU per request measured for the same run.
 */

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

export interface WindowOptions {
  windowMs: number;
  minBusy: number;
  minHttp: number;
}

export const DEFAULT_WINDOWS: WindowOptions = { windowMs: 100, minBusy: 0.5, minHttp: 0.03 };

/** Self time (µs) per function key within the load windows, each key's package, and their busy time (µs) in all. */
export interface WindowedSelf {
  self: Map<string, number>;
  packages: Map<string, string>;
  busyUs: number;
  windows: number;
}

const IDLE = '(idle)';
const LOADING = /node:internal\/modules\/|\/typescript\/lib\//;
const HTTP = /^node:_http_/;

/** The checkout this file is in: its own code is named from here on (src/…, dist/src/…, scripts/…, packages/…). */
export const CHECKOUT = join(__dirname, '../../..');

type CallFrame = CpuProfile['nodes'][number]['callFrame'];

/**
 * A function's file: from node_modules/ on for a library, from the checkout's root on for the
 * checkout's own code (`roots`: this checkout's and any other's, e.g. a worktree of another build),
 * else the path as it is; '' for V8's own entries (`(program)`, `(garbage collector)`).
 */
export function fileOf(url: string, roots: readonly string[] = [CHECKOUT]): string {
  const path = url.replace(/^file:\/\//, '');
  const lib = path.lastIndexOf('node_modules/');
  if (lib >= 0) {
    return path.slice(lib + 'node_modules/'.length);
  }
  for (const root of roots) {
    const prefix = root.endsWith('/') ? root : `${root}/`;
    if (path.startsWith(prefix)) {
      return path.slice(prefix.length);
    }
  }
  return path;
}

/** A function's key: its name, its file (fileOf) and line (1-based). */
export function functionKey(callFrame: CallFrame, roots?: readonly string[]): string {
  return `${callFrame.functionName || '(anonymous)'} ${fileOf(callFrame.url, roots)}:${callFrame.lineNumber + 1}`;
}

/**
 * The package (or the checkout's folder) of a file (fileOf): what the by-package table sums. The
 * checkout's own code goes by its folder, compiled (dist/) or not (`src/queue-id`, `scripts/bench`,
 * `packages/java-hash`): its functions pair up only here, since compiled and source lines differ.
 */
export function packageOf(file: string): string {
  if (file === '') {
    return '(native)';
  }
  if (file.startsWith('node:')) {
    return file;
  }
  const parts = file.replace(/^dist\//, '').split('/');
  if (parts.length === 1) {
    return parts[0];
  }
  if (parts[0] === 'src' || parts[0] === 'scripts' || parts[0] === 'packages') {
    return parts.slice(0, Math.min(2, parts.length - 1)).join('/');
  }
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Self time per function within the profile's load windows (module doc). */
export function selfInLoadWindows(profile: CpuProfile, opts: WindowOptions = DEFAULT_WINDOWS, roots?: readonly string[]): WindowedSelf {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const windowUs = opts.windowMs * 1000;
  // A delta below zero (V8 may write samples slightly out of order) counts as none.
  const delta = (i: number): number => Math.max(0, profile.timeDeltas[i] ?? 0);
  const windowOf: number[] = [];
  const stats = new Map<number, { all: number; busy: number; http: number; loading: number }>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += delta(i);
    const w = Math.floor(t / windowUs);
    windowOf.push(w);
    const frame = byId.get(id)?.callFrame;
    const s = stats.get(w) ?? { all: 0, busy: 0, http: 0, loading: 0 };
    s.all++;
    if (frame !== undefined && frame.functionName !== IDLE) {
      s.busy++;
      if (HTTP.test(frame.url)) {
        s.http++;
      }
      if (LOADING.test(frame.url)) {
        s.loading++;
      }
    }
    stats.set(w, s);
  });
  const counted = new Set<number>();
  for (const [w, s] of stats) {
    if (s.busy >= opts.minBusy * s.all && s.http >= opts.minHttp * s.all && s.loading === 0) {
      counted.add(w);
    }
  }
  const self = new Map<string, number>();
  const packages = new Map<string, string>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined || frame.functionName === IDLE || !counted.has(windowOf[i])) {
      return;
    }
    // A sample stands for the time until the next one (the last one: its own delta), as DevTools counts.
    const dt = i + 1 < profile.samples.length ? delta(i + 1) : delta(i);
    const key = functionKey(frame, roots);
    if (!packages.has(key)) {
      packages.set(key, packageOf(fileOf(frame.url, roots)));
    }
    self.set(key, (self.get(key) ?? 0) + dt);
    busyUs += dt;
  });
  return { self, packages, busyUs, windows: counted.size };
}

export interface DiffRow {
  key: string;
  /** µs per request in A and in B. */
  a: number;
  b: number;
}

/** Larger difference first, then by key (code-unit order: the same on every machine). */
function byDifference(x: DiffRow, y: DiffRow): number {
  return Math.abs(y.a - y.b) - Math.abs(x.a - x.b) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
}

/**
 * Each function's self time per request in A and B (its self time in the load windows ÷ the
 * requests), largest difference first. A profile without a load window cannot be compared.
 */
export function diffPerRequest(a: WindowedSelf, aRequests: number, b: WindowedSelf, bRequests: number): DiffRow[] {
  for (const [name, side, requests] of [['A', a, aRequests], ['B', b, bRequests]] as const) {
    if (side.windows === 0) {
      throw new Error(`profile ${name} has no load window (busy, in Node's HTTP code, no module loading)`);
    }
    if (!(requests > 0)) {
      throw new Error(`profile ${name}: the requests to divide by must be a positive number`);
    }
  }
  const keys = new Set([...a.self.keys(), ...b.self.keys()]);
  return [...keys].map((key) => ({ key, a: (a.self.get(key) ?? 0) / aRequests, b: (b.self.get(key) ?? 0) / bRequests })).sort(byDifference);
}

/** The rows summed by package (the packages of A and B), largest difference first. */
export function byPackage(rows: DiffRow[], a: WindowedSelf, b: WindowedSelf): DiffRow[] {
  const sums = new Map<string, DiffRow>();
  for (const r of rows) {
    const key = a.packages.get(r.key) ?? b.packages.get(r.key) ?? '(unknown)';
    const s = sums.get(key) ?? { key, a: 0, b: 0 };
    s.a += r.a;
    s.b += r.b;
    sums.set(key, s);
  }
  return [...sums.values()].sort(byDifference);
}
