import { MAX_OTHERS_ON_SERVER_CPU, isClean, minCleanRounds, roundOrder, versus } from '../../../scripts/bench/lib/compare';
import { cpuReader, watchOthers } from '../../../scripts/bench/lib/cpu';
import { LoadResult } from '../../../scripts/bench/lib/load';
import { allowedCpus, decidePlacement, parseCpuList, pinnedCommand } from '../../../scripts/bench/lib/placement';
import { describeServerFlags, serverNodeFlags } from '../../../scripts/bench/lib/proc';

function run(reqPerSec: number, cpuUsPerReq?: number, othersOnServerCpu?: number): LoadResult {
  return { requests: reqPerSec, seconds: 1, reqPerSec, p50: 1, p99: 1, ok: reqPerSec, non2xx: 0, errors: 0, timeouts: 0, cpuUsPerReq, othersOnServerCpu };
}

/** The measuring method of the HTTP comparisons of `npm run bench` (docs/performance.md, "How to reproduce"). */
describe('bench method', () => {
  it('reads a CPU list as the kernel writes it', () => {
    expect(parseCpuList('0-1')).toEqual([0, 1]);
    expect(parseCpuList('0-2,5,7-8\n')).toEqual([0, 1, 2, 5, 7, 8]);
    expect(parseCpuList('3')).toEqual([3]);
  });

  it('runs a pinned command through taskset (which execs it: same pid), an unpinned one as it is', () => {
    expect(pinnedCommand('/usr/bin/node', ['a.js', '--x'], [1])).toEqual(['taskset', ['-c', '1', '/usr/bin/node', 'a.js', '--x']]);
    expect(pinnedCommand('/usr/bin/wrk', ['-t1'], [0, 2])).toEqual(['taskset', ['-c', '0,2', '/usr/bin/wrk', '-t1']]);
    expect(pinnedCommand('/usr/bin/node', ['a.js'], undefined)).toEqual(['/usr/bin/node', ['a.js']]);
  });

  it('starts every HTTP server with V8\'s memory reducer off unless BENCH_MEMORY_REDUCER=on', () => {
    expect(serverNodeFlags({})).toEqual(['--no-memory-reducer']);
    expect(serverNodeFlags({ BENCH_MEMORY_REDUCER: 'off' })).toEqual(['--no-memory-reducer']);
    expect(serverNodeFlags({ BENCH_MEMORY_REDUCER: 'on' })).toEqual([]);
  });

  it('adds the flags of BENCH_NODE_FLAGS to every HTTP server, after the reducer\'s', () => {
    expect(serverNodeFlags({ BENCH_NODE_FLAGS: ' --perf-basic-prof  --max-semi-space-size=32 ' })).toEqual([
      '--no-memory-reducer',
      '--perf-basic-prof',
      '--max-semi-space-size=32',
    ]);
    expect(serverNodeFlags({ BENCH_MEMORY_REDUCER: 'on', BENCH_NODE_FLAGS: '--trace-gc' })).toEqual(['--trace-gc']);
    expect(serverNodeFlags({ BENCH_NODE_FLAGS: '' })).toEqual(['--no-memory-reducer']);
    expect(serverNodeFlags({ BENCH_NODE_FLAGS: '--trace-gc\t--perf-basic-prof\n' })).toEqual(['--no-memory-reducer', '--trace-gc', '--perf-basic-prof']);
  });

  it('names the servers\' flags, those of BENCH_NODE_FLAGS, and the reducer as the last of its flags sets it', () => {
    const plain = describeServerFlags({});
    expect(plain).toContain("Node flags: --no-memory-reducer (BENCH_NODE_FLAGS: none)");
    expect(plain).toContain("V8's memory reducer off");
    expect(describeServerFlags({ BENCH_MEMORY_REDUCER: 'on' })).toContain("Node flags: none (BENCH_NODE_FLAGS: none); V8's memory reducer on");
    const extra = describeServerFlags({ BENCH_NODE_FLAGS: '--perf-basic-prof' });
    expect(extra).toContain('Node flags: --no-memory-reducer --perf-basic-prof (BENCH_NODE_FLAGS: --perf-basic-prof)');
    expect(extra).toContain("V8's memory reducer off");
    expect(describeServerFlags({ BENCH_NODE_FLAGS: '--memory-reducer' })).toContain("V8's memory reducer on");
    expect(describeServerFlags({ BENCH_MEMORY_REDUCER: 'on', BENCH_NODE_FLAGS: '--no-memory-reducer' })).toContain("V8's memory reducer off");
  });

  it('pins nothing with --no-pin, and says so', () => {
    const p = decidePlacement(false);
    expect(p.server).toBeUndefined();
    expect(p.load).toBeUndefined();
    expect(p.text).toContain('nothing pinned');
  });

  it('pinned: servers and load generators on disjoint CPUs; unpinned: the reason', () => {
    const p = decidePlacement(true);
    if (p.server === undefined) {
      expect(p.text).toMatch(/nothing pinned \((\d+ CPU|taskset not found)/);
    } else {
      expect(p.server.length).toBeGreaterThan(0);
      expect(p.load?.length).toBeGreaterThan(0);
      expect(p.server.filter((c) => p.load?.includes(c))).toEqual([]);
    }
    decidePlacement(false);
  });

  it('reads a process’s CPU time and the share of CPUs others took as numbers (where /proc is)', () => {
    const cpu = cpuReader(process.pid);
    const others = watchOthers({ serverPid: process.pid, cpus: allowedCpus(), dependencyPids: [] });
    const t0 = cpu();
    let spin = 0;
    for (let i = 0; i < 2_000_000; i++) {
      spin += i % 7;
    }
    expect(spin).toBeGreaterThan(0);
    const t1 = cpu();
    const share = others();
    if (t0 !== undefined && t1 !== undefined) {
      expect(t1).toBeGreaterThanOrEqual(t0);
    }
    if (share !== undefined) {
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
    }
  });

  it('alternates the order of the subjects every other round, so each run is next to its ceiling', () => {
    expect([0, 1, 2, 3].map((i) => roundOrder(i, 2))).toEqual([[0, 1], [1, 0], [0, 1], [1, 0]]);
    // subject, ceiling, subject: the ceiling stays next to both.
    expect([0, 1].map((i) => roundOrder(i, 3))).toEqual([[0, 1, 2], [2, 1, 0]]);
  });

  it('calls a round clean when others left the servers their CPU, or when nothing was pinned', () => {
    expect(isClean([run(1, 1, 0.05), run(1, 1, MAX_OTHERS_ON_SERVER_CPU)])).toBe(true);
    expect(isClean([run(1, 1, 0.05), run(1, 1, MAX_OTHERS_ON_SERVER_CPU + 0.01)])).toBe(false);
    expect(isClean([run(1), run(1)])).toBe(true);
  });

  it('gives a verdict only with at least half the rounds asked for clean', () => {
    expect(minCleanRounds(9)).toBe(5);
    expect(minCleanRounds(7)).toBe(4);
    expect(minCleanRounds(1)).toBe(1);
  });

  it('takes the ratio as the median of the rounds’ back-to-back pairs, not a ratio of medians', () => {
    const subject = { ...run(100), runs: [run(100, 10), run(50, 10), run(90, 10)] };
    const ceiling = { ...run(100), runs: [run(100, 10), run(100, 10), run(45, 10)] };
    // pairs: 1.0, 0.5, 2.0 → median 1.0 (the ratio of the medians would be 90 / 100).
    expect(versus(subject, ceiling)).toEqual({ ratio: 1, cpuRatio: 1 });
  });
});
