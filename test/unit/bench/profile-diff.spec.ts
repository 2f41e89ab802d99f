import { CpuProfile, byPackage, diffPerRequest, functionKey, packageOfKey, selfInLoadWindows } from '../../../scripts/bench/lib/profile-diff';

type Frame = [name: string, url: string, line?: number];

/** A profile whose samples are `frames` in order, one every `stepUs` from time 0. */
function profile(frames: Frame[], stepUs = 1000): CpuProfile {
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
  // The first sample at time 0: each window of 100 ms holds 100 samples of 1 ms.
  return { nodes, samples, timeDeltas: frames.map(() => stepUs), startTime: -stepUs };
}

const HTTP: Frame = ['parserOnIncoming', 'node:_http_server', 1024];
const ROUTE: Frame = ['handler', 'file:///work/main/dist/src/common/direct-routes/direct-handler.js', 120];
const IDLE: Frame = ['(idle)', ''];
const LOADER: Frame = ['Module._load', 'node:internal/modules/cjs/loader', 1001];

/** `n` copies of each frame, in turn. */
function times(n: number, ...frames: Frame[]): Frame[] {
  return Array.from({ length: n }, () => frames).flat();
}

describe('profile diff (scripts/bench/profile-diff.ts)', () => {
  it('names a function by its name, its file from node_modules or the checkout on, and its 1-based line', () => {
    expect(functionKey({ functionName: 'lookup', url: 'file:///work/main/node_modules/find-my-way/index.js', lineNumber: 530 })).toBe('lookup find-my-way/index.js:531');
    expect(functionKey({ functionName: '', url: 'file:///work/main/dist/src/queue-id/request-pops.js', lineNumber: 49 })).toBe('(anonymous) dist/src/queue-id/request-pops.js:50');
    expect(functionKey({ functionName: 'feed', url: '/work/wt/x/src/queue-id/redis/resp/resp-pop-reader.ts', lineNumber: 85 })).toBe('feed src/queue-id/redis/resp/resp-pop-reader.ts:86');
    expect(functionKey({ functionName: 'emit', url: 'node:events', lineNumber: 469 })).toBe('emit node:events:470');
    expect(functionKey({ functionName: 'get', url: 'file:///work/main/node_modules/toad-cache/dist/toad-cache.cjs', lineNumber: 448 })).toBe('get toad-cache/dist/toad-cache.cjs:449');
    expect(functionKey({ functionName: 'shardOf', url: 'file:///work/main/packages/java-hash/dist/java-hash.js', lineNumber: 35 })).toBe('shardOf packages/java-hash/dist/java-hash.js:36');
  });

  it('sums the checkout by folder, compiled or not, and libraries by package', () => {
    expect(packageOfKey('handler dist/src/common/direct-routes/direct-handler.js:121')).toBe('src/common');
    expect(packageOfKey('feed src/queue-id/redis/resp/resp-pop-reader.ts:86')).toBe('src/queue-id');
    expect(packageOfKey('(anonymous) scripts/bench/servers/bare-queue.ts:121')).toBe('scripts/bench');
    expect(packageOfKey('get @fastify/error/index.js:3')).toBe('@fastify/error');
    expect(packageOfKey('lookup find-my-way/index.js:531')).toBe('find-my-way');
    expect(packageOfKey('get toad-cache/dist/toad-cache.cjs:449')).toBe('toad-cache');
    expect(packageOfKey('shardOf packages/java-hash/dist/java-hash.js:36')).toBe('packages/java-hash');
    expect(packageOfKey('emit node:events:470')).toBe('node:events');
    expect(packageOfKey('(garbage collector) :0')).toBe('(native)');
  });

  it('counts only the load windows: busy, in Node HTTP code, no module loading', () => {
    const p = profile([
      // Window 0 (0–99 ms): the start, loading modules: not counted.
      ...times(50, LOADER, HTTP),
      // Window 1: under load (half HTTP, half the route): counted.
      ...times(50, HTTP, ROUTE),
      // Window 2: mostly idle: not counted.
      ...times(10, HTTP, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE),
      // Window 3: busy but no HTTP (a timer's work between runs): not counted.
      ...times(100, ['sample', 'file:///work/main/dist/src/metrics/history.sampler.js']),
    ]);
    const w = selfInLoadWindows(p);
    expect(w.windows).toBe(1);
    expect(w.busyUs).toBe(100_000);
    expect(w.self.get('parserOnIncoming node:_http_server:1025')).toBe(50_000);
    expect(w.self.get('handler dist/src/common/direct-routes/direct-handler.js:121')).toBe(50_000);
    expect(w.self.has('Module._load node:internal/modules/cjs/loader:1002')).toBe(false);
  });

  it('gives each function its share of the busy time times the CPU per request, largest difference first', () => {
    // A: 3/4 HTTP, 1/4 route at 40 µs per request; B: all HTTP at 30 µs per request.
    const a = selfInLoadWindows(profile(times(50, HTTP, HTTP, HTTP, ROUTE)));
    const b = selfInLoadWindows(profile(times(100, HTTP)));
    const rows = diffPerRequest(a, 40, b, 30);
    expect(rows.map((r) => r.key)).toEqual(['handler dist/src/common/direct-routes/direct-handler.js:121', 'parserOnIncoming node:_http_server:1025']);
    expect(rows[0]).toEqual({ key: 'handler dist/src/common/direct-routes/direct-handler.js:121', a: 10, b: 0 });
    expect(rows[1]).toEqual({ key: 'parserOnIncoming node:_http_server:1025', a: 30, b: 30 });
    expect(byPackage(rows)).toEqual([
      { key: 'src/common', a: 10, b: 0 },
      { key: 'node:_http_server', a: 30, b: 30 },
    ]);
  });

  it('gives nothing per request for a profile without a load window', () => {
    const none = selfInLoadWindows(profile(times(100, LOADER)));
    const b = selfInLoadWindows(profile(times(100, HTTP)));
    expect(none.windows).toBe(0);
    expect(diffPerRequest(none, 40, b, 30)).toEqual([{ key: 'parserOnIncoming node:_http_server:1025', a: 0, b: 30 }]);
  });
});
