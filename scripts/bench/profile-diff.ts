/**
 * Two `--cpu-prof` profiles of servers under the same HTTP load, function by function in µs per
 * request (lib/profile-diff.ts: only the load windows; each function's share of the busy time
 * scaled by the CPU per request measured for that run, e.g. the `cpu µs/req` that
 * queue-cpu-split.ts prints for the same rounds):
 *
 *   npx ts-node --transpile-only scripts/bench/profile-diff.ts <A.cpuprofile> <A µs/req> <B.cpuprofile> <B µs/req> [top=40]
 *
 * Prints the functions whose per-request time differs most (A − B, then A and B), then the same by
 * package. A profile slows what it measures (by about a quarter at a 250-µs interval): its figures
 * say where a difference is, not how large it is unprofiled.
 */
import { readFileSync } from 'node:fs';
import { CpuProfile, DiffRow, byPackage, diffPerRequest, selfInLoadWindows } from './lib/profile-diff';

function main(): void {
  const [fileA, cpuA, fileB, cpuB, topArg] = process.argv.slice(2);
  const aCpu = Number(cpuA);
  const bCpu = Number(cpuB);
  if (!fileA || !fileB || !(aCpu > 0) || !(bCpu > 0)) {
    throw new Error('usage: profile-diff.ts <A.cpuprofile> <A µs/req> <B.cpuprofile> <B µs/req> [top]');
  }
  const top = Number(topArg ?? 40);
  const a = selfInLoadWindows(JSON.parse(readFileSync(fileA, 'utf8')) as CpuProfile);
  const b = selfInLoadWindows(JSON.parse(readFileSync(fileB, 'utf8')) as CpuProfile);
  console.log(`load windows: A ${a.windows} (${(a.busyUs / 1e6).toFixed(2)} s busy), B ${b.windows} (${(b.busyUs / 1e6).toFixed(2)} s busy)`);
  const rows = diffPerRequest(a, aCpu, b, bCpu);
  const line = (r: DiffRow): string => `${(r.a - r.b).toFixed(3).padStart(7)}  A ${r.a.toFixed(3).padStart(6)}  B ${r.b.toFixed(3).padStart(6)}  ${r.key}`;
  console.log(`\nµs per request, largest differences (A − B, A, B):`);
  rows.slice(0, top).forEach((r) => console.log(line(r)));
  console.log(`\nby package:`);
  byPackage(rows)
    .slice(0, 40)
    .forEach((r) => console.log(line(r)));
}

main();
