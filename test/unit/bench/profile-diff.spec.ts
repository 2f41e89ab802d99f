import { CHECKOUT, CpuProfile, byPackage, diffPerRequest, fileOf, functionKey, packageOf, selfInLoadWindows } from '../../../scripts/bench/lib/profile-diff';

type Frame = [name: string, url: string, line?: number];

/** A profile of `frames` in order: the i-th sample `deltas[i]` µs after the one before (1 ms each unless given), the first at time 0. */
function profile(frames: Frame[], deltas?: number[]): CpuProfile {
  const ids = new Map<string, number>();
  const nodes: CpuProfile['nodes'] = [];
  const samples = frames.map(([functionName, url, lineNumber = 0]) => {
    const key = `${functionName}|${url}|${lineNumber}`;
    let id = ids.get(key);
    if (id === undefined) {
      id = nodes.length + 1;
      ids.set(key, id);
      nodes.push({ id, callFrame: { functionName, url, lineNumber } });
    }
    return id;
  });
  const timeDeltas = deltas ?? frames.map(() => 1000);
  return { nodes, samples, timeDeltas, startTime: -timeDeltas[0] };
}

const HTTP: Frame = ['parserOnIncoming', 'node:_http_server', 1024];
const ROUTE: Frame = ['handler', `file://${CHECKOUT}/dist/src/common/direct-routes/direct-handler.js`, 120];
const NOTE: Frame = ['noteUnmarked', `file://${CHECKOUT}/dist/src/common/app-hooks.js`, 69];
const GC: Frame = ['(garbage collector)', '', -1];
const IDLE: Frame = ['(idle)', ''];
const LOADER: Frame = ['Module._load', 'node:internal/modules/cjs/loader', 1001];
const TSC: Frame = ['createTypeChecker', `file://${CHECKOUT}/node_modules/typescript/lib/typescript.js`, 51071];

const HTTP_KEY = 'parserOnIncoming node:_http_server:1025';
const ROUTE_KEY = 'handler dist/src/common/direct-routes/direct-handler.js:121';

/** `n` copies of each frame, in turn. */
function times(n: number, ...frames: Frame[]): Frame[] {
  return Array.from({ length: n }, () => frames).flat();
}

describe('profile diff (scripts/bench/profile-diff.ts)', () => {
  it('names a file from node_modules on for a library, from a checkout root on for our code, as it is otherwise', () => {
    expect(fileOf(`file://${CHECKOUT}/node_modules/find-my-way/index.js`)).toBe('find-my-way/index.js');
    expect(fileOf('file:///srv/app/node_modules/.pnpm/x@1/node_modules/@fastify/error/index.js')).toBe('@fastify/error/index.js');
    expect(fileOf(`file://${CHECKOUT}/dist/src/queue-id/request-pops.js`)).toBe('dist/src/queue-id/request-pops.js');
    expect(fileOf('/home/me/src/shardleaf/src/queue-id/redis/resp/resp-pop-reader.ts', ['/home/me/src/shardleaf'])).toBe('src/queue-id/redis/resp/resp-pop-reader.ts');
    expect(fileOf('/work/wt/other/dist/src/main.js', [CHECKOUT, '/work/wt/other/'])).toBe('dist/src/main.js');
    expect(fileOf('node:events')).toBe('node:events');
    expect(fileOf('')).toBe('');
  });

  it('keys a function by name, file and 1-based line; accessors and V8 entries too', () => {
    expect(functionKey({ functionName: 'lookup', url: `file://${CHECKOUT}/node_modules/find-my-way/index.js`, lineNumber: 530 })).toBe('lookup find-my-way/index.js:531');
    expect(functionKey({ functionName: '', url: `file://${CHECKOUT}/dist/src/queue-id/request-pops.js`, lineNumber: 49 })).toBe('(anonymous) dist/src/queue-id/request-pops.js:50');
    expect(functionKey({ functionName: 'get aheadEnabled', url: `file://${CHECKOUT}/dist/src/queue-id/request-pops.js`, lineNumber: 20 })).toBe('get aheadEnabled dist/src/queue-id/request-pops.js:21');
    expect(functionKey({ functionName: '(garbage collector)', url: '', lineNumber: -1 })).toBe('(garbage collector) :0');
  });

  it('sums our code by folder, compiled or not, libraries by package, V8 entries as native', () => {
    expect(packageOf('dist/src/common/direct-routes/direct-handler.js')).toBe('src/common');
    expect(packageOf('src/queue-id/redis/resp/resp-pop-reader.ts')).toBe('src/queue-id');
    expect(packageOf('dist/src/main.js')).toBe('src');
    expect(packageOf('scripts/bench/servers/bare-queue.ts')).toBe('scripts/bench');
    expect(packageOf('packages/java-hash/dist/java-hash.js')).toBe('packages/java-hash');
    expect(packageOf('@fastify/error/index.js')).toBe('@fastify/error');
    expect(packageOf('toad-cache/dist/toad-cache.cjs')).toBe('toad-cache');
    expect(packageOf('node:events')).toBe('node:events');
    expect(packageOf('')).toBe('(native)');
  });

  it('counts only the load windows: busy, in Node HTTP code, no module loading or compiling', () => {
    const p = profile([
      // Window 0 (0–99 ms): the start, loading modules: not counted.
      ...times(50, LOADER, HTTP),
      // Window 1: under load (half HTTP, half the route): counted.
      ...times(50, HTTP, ROUTE),
      // Window 2: mostly idle: not counted.
      ...times(10, HTTP, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE),
      // Window 3: busy but no HTTP (a timer's work between runs): not counted.
      ...times(100, ['sample', `file://${CHECKOUT}/dist/src/metrics/history.sampler.js`]),
      // Window 4: a ceiling transpiling a file on require: not counted.
      ...times(50, TSC, HTTP),
      // Window 5: under load with the GC: counted (V8's own entries are busy time).
      ...times(50, HTTP, GC),
    ]);
    const w = selfInLoadWindows(p);
    expect(w.windows).toBe(2);
    expect(w.busyUs).toBe(200_000);
    expect(w.self.get(HTTP_KEY)).toBe(100_000);
    expect(w.self.get(ROUTE_KEY)).toBe(50_000);
    expect(w.self.get('(garbage collector) :0')).toBe(50_000);
    expect(w.packages.get('(garbage collector) :0')).toBe('(native)');
    expect(w.self.has('Module._load node:internal/modules/cjs/loader:1002')).toBe(false);
  });

  it('puts a sample in the window of its time, and gives it the time until the next sample', () => {
    // Samples at 0, 10, 100, 150 ms (deltas 0, 10, 90, 50 ms after the start): the third opens window 1.
    const p = profile([HTTP, ROUTE, HTTP, ROUTE], [0, 10_000, 90_000, 50_000]);
    const w = selfInLoadWindows(p, { windowMs: 100, minBusy: 0.5, minHttp: 0.5 });
    expect(w.windows).toBe(2);
    // HTTP at 0 stands for 10 ms, the route at 10 for 90, HTTP at 100 for 50, the last (route) its own 50.
    expect(w.self.get(HTTP_KEY)).toBe(60_000);
    expect(w.self.get(ROUTE_KEY)).toBe(140_000);
  });

  it('counts a window at its thresholds, and a delta below zero as none', () => {
    // 50 % busy and 3 % HTTP exactly: counted. One delta of −5 ms: no time, no step back.
    const frames = [...times(3, HTTP), ...times(47, ROUTE), ...times(50, IDLE)];
    const deltas = frames.map((_, i) => (i === 10 ? -5000 : 1000));
    const w = selfInLoadWindows(profile(frames, deltas));
    expect(w.windows).toBe(1);
    expect(w.self.get(ROUTE_KEY)).toBe(46_000);
    const below = selfInLoadWindows(profile([...times(2, HTTP), ...times(48, ROUTE), ...times(50, IDLE)]));
    expect(below.windows).toBe(0);
  });

  it('divides each function by its server\'s requests, largest difference first, and sums packages', () => {
    // A: 100 ms of which 50 HTTP, 25 route, 25 note, for 2,500 requests; B: 100 ms of HTTP for 2,000.
    const a = selfInLoadWindows(profile(times(25, HTTP, HTTP, ROUTE, NOTE)));
    const b = selfInLoadWindows(profile(times(100, HTTP)));
    const rows = diffPerRequest(a, 2500, b, 2000);
    expect(rows).toEqual([
      { key: HTTP_KEY, a: 20, b: 50 },
      // A tie: by key.
      { key: ROUTE_KEY, a: 10, b: 0 },
      { key: 'noteUnmarked dist/src/common/app-hooks.js:70', a: 10, b: 0 },
    ]);
    expect(byPackage(rows, a, b)).toEqual([
      { key: 'node:_http_server', a: 20, b: 50 },
      { key: 'src/common', a: 20, b: 0 },
    ]);
  });

  it('refuses a profile without a load window, or no requests to divide by', () => {
    const none = selfInLoadWindows(profile(times(100, LOADER)));
    const b = selfInLoadWindows(profile(times(100, HTTP)));
    expect(none.windows).toBe(0);
    expect(() => diffPerRequest(none, 100, b, 100)).toThrow('profile A has no load window');
    expect(() => diffPerRequest(b, 100, none, 100)).toThrow('profile B has no load window');
    expect(() => diffPerRequest(b, 0, b, 100)).toThrow('profile A: the requests to divide by must be a positive number');
  });
});
