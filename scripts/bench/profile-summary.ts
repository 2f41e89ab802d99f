/**
 * Summarises a `--cpu-prof` profile: self time per function (top N), and total time per package.
 * Usage: npx ts-node scripts/bench/profile-summary.ts <file.cpuprofile> [top=30]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function main(): void {
  const file = process.argv[2];
  if (!file) {
    throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  }
  const top = Number(process.argv[3] ?? 30);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) {
      return;
    }
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      return;
    }
    total += dt;
    const short = url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/');
    const key = `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  });
  const pct = (v: number): string => `${((100 * v) / total).toFixed(1).padStart(5)} %`;
  console.log(`${(total / 1e6).toFixed(2)} s busy (idle excluded; percentages of busy time)\n\nby package:`);
  for (const [k, v] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    console.log(`${pct(v)}  ${k}`);
  }
  console.log(`\ntop ${top} functions by self time:`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${pct(v)}  ${k}`);
  }
}

function packageOf(url: string, fn: string): string {
  if (url === '') {
    return fn.startsWith('(') ? fn : '(native/builtin)';
  }
  if (url.startsWith('node:')) {
    return 'node:internal';
  }
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) {
    return m[1];
  }
  return url.includes('/dist/') ? 'shardleaf (dist)' : url;
}

main();
