import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OthersWatch } from './cpu';
import { pinnedCommand, placement } from './placement';
import { ROOT, TS_NODE, runCommand } from './proc';

/** The load generators the bench knows: autocannon (npm, always there) and wrk (C, when installed). */
export type Generator = 'autocannon' | 'wrk';

export interface LoadResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** Latency percentiles, ms. */
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Server CPU time per request, µs (set by compare.measure; median over runs). */
  cpuUsPerReq?: number;
  /**
   * Share of the pinned servers' CPUs that other processes took during the run (set by
   * compare.measure when the servers are pinned; median over runs in a summary).
   */
  othersOnServerCpu?: number;
  /** Which generator produced the figures (autocannon when absent). */
  generator?: Generator;
  /** compare.measure: the same subject's median under wrk, when wrk ran too. */
  wrk?: LoadResult;
  /**
   * compare.measure: rounds of this generator that were clean, all of them, and whether enough were
   * clean for a verdict (compare.minCleanRounds).
   */
  rounds?: { clean: number; all: number; judged: boolean };
  /** compare.measure: the measured runs of this subject and generator used (clean rounds), in order. */
  runs?: LoadResult[];
}

export interface LoadSpec {
  port: number;
  paths: string[];
  connections: number;
  durationS: number;
  /** autocannon unless given. */
  generator?: Generator;
  /**
   * Pinned servers: autocannon (workers/load.ts) reports the share of the server's CPU others took
   * during its own load window (`othersOnServerCpu`), start-up left out.
   */
  watch?: OthersWatch;
}

/** One run of the spec's generator. */
export function runLoadWith(spec: LoadSpec): Promise<LoadResult> {
  return spec.generator === 'wrk' ? runWrk(spec) : runLoad(spec);
}

/** One autocannon run in its own process (workers/load.ts), on the load generators' CPUs. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const [cmd, args] = pinnedCommand(
    process.execPath,
    [...TS_NODE, `${ROOT}/scripts/bench/workers/load.ts`, JSON.stringify(spec)],
    placement().load,
  );
  const out = await runCommand(cmd, args, {}, (spec.durationS + 60) * 1000);
  const line = out.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as LoadResult;
}

/** The run with the median req/s (runs sorted by req/s, the middle one). */
export function medianRun(runs: readonly LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.reqPerSec - b.reqPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

let wrkPath: string | null | undefined;

/** wrk's path when it is installed (bench.sh installs Debian's package when it can), else null. */
export function wrkInstalled(): string | null {
  if (wrkPath === undefined) {
    const r = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
    wrkPath = r.status === 0 && r.stdout.trim().length > 0 ? r.stdout.trim() : null;
  }
  return wrkPath;
}

/**
 * wrk's Lua side: requests prepared once (cycling through the paths, as autocannon does), and one
 * JSON line with the figures at the end. Latency percentiles are µs in wrk, ms here.
 */
function wrkScript(paths: readonly string[]): string {
  return `
local paths = { ${paths.map((p) => JSON.stringify(p)).join(', ')} }
local reqs = {}
local i = 0
init = function(args)
  for k, p in ipairs(paths) do reqs[k] = wrk.format("GET", p) end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format('\\nWRKJSON {"requests":%d,"seconds":%.6f,"reqPerSec":%.3f,"p50":%.3f,"p99":%.3f,"non2xx":%d,"errors":%d,"timeouts":%d}\\n',
    summary.requests, secs, summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.status, e.connect + e.read + e.write, e.timeout))
end
`;
}

/**
 * One wrk run (one thread: it needs far less CPU than autocannon; `wrk -t1` is what the "Hot path"
 * issue measured with), on the load generators' CPUs.
 */
export async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const wrk = wrkInstalled();
  if (wrk === null) {
    throw new Error('wrk is not installed');
  }
  const dir = mkdtempSync(join(tmpdir(), 'shardleaf-wrk-'));
  try {
    const script = join(dir, 'paths.lua');
    writeFileSync(script, wrkScript(spec.paths));
    const [cmd, args] = pinnedCommand(
      wrk,
      ['-t1', `-c${spec.connections}`, `-d${spec.durationS}s`, '--timeout', '10s', '-s', script, `http://127.0.0.1:${spec.port}`],
      placement().load,
    );
    const out = await runCommand(
      cmd,
      args,
      {},
      (spec.durationS + 60) * 1000,
    );
    const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (line === undefined) {
      throw new Error(`wrk printed no figures:\n${out}`);
    }
    const r = JSON.parse(line.slice('WRKJSON '.length)) as Omit<LoadResult, 'ok'>;
    return { ...r, ok: r.requests - r.non2xx, generator: 'wrk' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
