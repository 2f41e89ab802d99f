import { ROOT, TS_NODE, runNode } from './proc';

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
}

export interface LoadSpec {
  port: number;
  paths: string[];
  connections: number;
  durationS: number;
}

/** One autocannon run in its own process (workers/load.ts). */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const out = await runNode([...TS_NODE, `${ROOT}/scripts/bench/workers/load.ts`, JSON.stringify(spec)], {}, (spec.durationS + 60) * 1000);
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
