/**
 * Two `--cpu-prof` profiles of servers under the same HTTP load (the service and its ceiling,
 * `queue-cpu-split.ts` with PROFILE_DIR), compared function by function in µs per request.
 *
 * Only the load windows count: the profile is cut into windows of `windowMs`, and a window counts
 * when at least `minBusy` of its samples are not idle, at least `minHttp` of them are in Node's
 * HTTP code (`node:_http_*`), and none is in module loading or TypeScript's compiler (the start,
 * or a ceiling's transpile on require). Within them, each function's self time is taken as a share
 * of the busy (non-idle) time and scaled by the CPU per request measured for that run: µs per
 * request, comparable between the two. The scaling assumes the busy time of the windows is the
 * process's CPU (one JS thread; the GC's helper threads are not in a profile).
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

/** Self time (µs) per function key within the load windows, and their busy time (µs) in all. */
export interface WindowedSelf {
  self: Map<string, number>;
  busyUs: number;
  windows: number;
}

const IDLE = '(idle)';
const LOADING = /node:internal\/modules\/|\/typescript\/lib\//;
const HTTP = /^node:_http_/;

/** A function's key: its name, its file (from node_modules/ or the checkout's root on) and line (1-based). */
export function functionKey(callFrame: { functionName: string; url: string; lineNumber: number }): string {
  const path = callFrame.url.replace(/^file:\/\//, '');
  const url = path.includes('node_modules/') ? path.replace(/^.*node_modules\//, '') : path.replace(/^.*?\/(dist|src|scripts|packages)\//, '$1/');
  return `${callFrame.functionName || '(anonymous)'} ${url}:${callFrame.lineNumber + 1}`;
}

/** The package (or the checkout's folder) a function key belongs to: what the by-package table sums. */
export function packageOfKey(key: string): string {
  const at = key.indexOf(' ');
  const file = key.slice(at + 1).replace(/:\d+$/, '');
  if (file === '' || !file.includes('/')) {
    return file.startsWith('node:') ? file : '(native)';
  }
  if (file.startsWith('node:')) {
    return file;
  }
  // The checkout's own code by its folder, compiled (dist/) or not: `src/queue-id`, `scripts/bench`, `packages/java-hash`.
  const parts = file.replace(/^dist\//, '').split('/');
  if (parts[0] === 'src' || parts[0] === 'scripts' || parts[0] === 'packages') {
    return parts.slice(0, Math.min(2, parts.length - 1)).join('/');
  }
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Self time per function within the profile's load windows (module doc). */
export function selfInLoadWindows(profile: CpuProfile, opts: WindowOptions = DEFAULT_WINDOWS): WindowedSelf {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const windowUs = opts.windowMs * 1000;
  const windowOf: number[] = [];
  const stats = new Map<number, { all: number; busy: number; http: number; loading: number }>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
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
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined || frame.functionName === IDLE || !counted.has(windowOf[i])) {
      return;
    }
    // A sample stands for the time until the next one (the last one: its own delta).
    const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const key = functionKey(frame);
    self.set(key, (self.get(key) ?? 0) + dt);
    busyUs += dt;
  });
  return { self, busyUs, windows: counted.size };
}

export interface DiffRow {
  key: string;
  /** µs per request in A and in B. */
  a: number;
  b: number;
}

/** Per-request self time of every function in A and B (shares of busy time × CPU per request), largest difference first. */
export function diffPerRequest(a: WindowedSelf, aCpuUs: number, b: WindowedSelf, bCpuUs: number): DiffRow[] {
  const keys = new Set([...a.self.keys(), ...b.self.keys()]);
  const per = (side: WindowedSelf, cpu: number, key: string): number => (side.busyUs > 0 ? ((side.self.get(key) ?? 0) / side.busyUs) * cpu : 0);
  return [...keys]
    .map((key) => ({ key, a: per(a, aCpuUs, key), b: per(b, bCpuUs, key) }))
    .sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b) || x.key.localeCompare(y.key));
}

/** The rows summed by package (packageOfKey), largest difference first. */
export function byPackage(rows: DiffRow[]): DiffRow[] {
  const sums = new Map<string, DiffRow>();
  for (const r of rows) {
    const key = packageOfKey(r.key);
    const s = sums.get(key) ?? { key, a: 0, b: 0 };
    s.a += r.a;
    s.b += r.b;
    sums.set(key, s);
  }
  return [...sums.values()].sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b) || x.key.localeCompare(y.key));
}
