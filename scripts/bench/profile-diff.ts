/**
 * Two `--cpu-prof` profiles of servers under the same HTTP load, function by function in µs of
 * self time per request (lib/profile-diff.ts: only the load windows, divided by the requests each
 * server answered in the run, e.g. from the "requests by pid" line of queue-cpu-split.ts):
 *
 *   npx ts-node --transpile-only scripts/bench/profile-diff.ts <A.cpuprofile> <A requests> <B.cpuprofile> <B requests> [top=40] [packages=40]
 *
 * Prints each side's busy time per request (what the rows add up to), then the functions whose
 * time per request differs most (A − B, then A and B), then the same by package. Compare the busy
 * time with the CPU per request measured for the same run: the rest is CPU a profile marks idle
 * (lib/profile-diff.ts). A profile slows what it measures (by about a quarter at a 250-µs
 * interval): its figures say where a difference is, not how large it is unprofiled.
 */
import { readFileSync } from 'node:fs';
import { CpuProfile, DiffRow, byPackage, diffPerRequest, selfInLoadWindows } from './lib/profile-diff';

function count(arg: string | undefined, fallback: number, what: string): number {
  const n = arg === undefined ? fallback : Number(arg);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${what} must be a whole number ≥ 0, not ${arg}`);
  }
  return n;
}

function main(): void {
  const [fileA, requestsA, fileB, requestsB, topArg, packagesArg] = process.argv.slice(2);
  if (!fileA || !fileB || requestsA === undefined || requestsB === undefined) {
    throw new Error('usage: profile-diff.ts <A.cpuprofile> <A requests> <B.cpuprofile> <B requests> [top] [packages]');
  }
  const aRequests = count(requestsA, 0, 'A requests');
  const bRequests = count(requestsB, 0, 'B requests');
  const top = count(topArg, 40, 'top');
  const packages = count(packagesArg, 40, 'packages');
  const a = selfInLoadWindows(JSON.parse(readFileSync(fileA, 'utf8')) as CpuProfile);
  const b = selfInLoadWindows(JSON.parse(readFileSync(fileB, 'utf8')) as CpuProfile);
  const rows = diffPerRequest(a, aRequests, b, bRequests);
  for (const [name, side, requests] of [['A', a, aRequests], ['B', b, bRequests]] as const) {
    console.log(
      `${name}: ${side.windows} load windows, ${(side.busyUs / 1e6).toFixed(2)} s busy, ${(side.busyUs / requests).toFixed(2)} µs busy per request (${requests} requests)`,
    );
  }
  const line = (r: DiffRow): string => `${(r.a - r.b).toFixed(3).padStart(7)}  A ${r.a.toFixed(3).padStart(6)}  B ${r.b.toFixed(3).padStart(6)}  ${r.key}`;
  console.log(`\nµs of self time per request, largest differences first (A − B, A, B):`);
  rows.slice(0, top).forEach((r) => console.log(line(r)));
  console.log(`\nby package, largest differences first:`);
  byPackage(rows, a, b)
    .slice(0, packages)
    .forEach((r) => console.log(line(r)));
}

main();
