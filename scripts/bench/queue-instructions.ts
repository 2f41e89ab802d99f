/**
 * Queue single get: user-space instructions per request of the service (dist/), of other builds of
 * it and of the bare ceiling, each server run under `valgrind --tool=callgrind` and loaded with a
 * fixed number of requests (autocannon, 64 connections, the 64 shards' gatePasses in turn). Unlike
 * CPU time, an instruction count hardly moves with what else runs on the machine: this is how to
 * compare two builds on a shared machine. The kernel's share (system calls) is not counted:
 * queue-cpu-split.ts with PERF_STAT=1 counts system calls per request.
 *
 *   BENCH_MYSQL_URL=mysql://shardleaf_bench:shardleaf_bench@127.0.0.1:3306 \
 *     node -r ts-node/register/transpile-only scripts/bench/queue-instructions.ts [requests=10000] [warmup=20000] [rounds=1]
 *
 * SERVICES="base=/other/worktree/dist/src/main.js,…": more builds, each a subject of its own.
 * Per subject: start under callgrind, warm up (the JIT's tiers settle; not counted), zero the
 * counters (`callgrind_control -z`), send `requests`, dump (`callgrind_control -d`) and read the
 * total Ir; `rounds` such measurements per server, one after the other. Prints Ir per request.
 * CALLGRIND_KEEP=DIR keeps the dumps there (callgrind_annotate reads them).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { admin, benchEnv, cleanRedis, dropDatabase, ensureBuild, recreateDatabase } from './lib/bench-env';
import type { ServerProc } from './lib/proc';
import { startCeiling, startService } from './lib/service';
import { gatePassPerShard, topUp } from './cases/queue';

async function load(port: number, paths: string[], amount: number): Promise<{ ok: number; other: number }> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 64,
    amount,
    requests: paths.map((path) => ({ method: 'GET' as const, path })),
  });
  return { ok: r['2xx'], other: r.non2xx + r.errors + r.timeouts };
}

/** Total instructions (Ir) of the newest dump of `pid` in `dir`. */
function dumpedIr(dir: string, pid: number): number {
  const files = readdirSync(dir)
    .filter((f) => new RegExp(`^${pid}\\.out\\.\\d+$`).test(f))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  const newest = files[files.length - 1];
  const m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, newest), 'utf8'));
  if (m === null) {
    throw new Error(`no totals in ${newest}`);
  }
  return Number(m[1]);
}

async function main(): Promise<void> {
  const requests = Number(process.argv[2] ?? 10_000);
  const warmup = Number(process.argv[3] ?? 20_000);
  const rounds = Number(process.argv[4] ?? 1);
  const dir = process.env.CALLGRIND_KEEP ?? mkdtempSync(join(tmpdir(), 'shardleaf-callgrind-'));
  process.env.BENCH_SERVER_WRAP = `valgrind --tool=callgrind --smc-check=all-non-file --dump-instr=no --callgrind-out-file=${dir}/%p.out`;
  const env = benchEnv();
  await ensureBuild((s) => console.error(s));
  await recreateDatabase(env);
  const service = await startService(env);
  const subjects: Array<[string, ServerProc]> = [['service', service]];
  try {
    for (const spec of (process.env.SERVICES ?? '').split(',').filter(Boolean)) {
      const [name, mainJs] = spec.split('=');
      subjects.push([name, await startService(env, undefined, {}, undefined, mainJs)]);
    }
    subjects.push(['bare', await startCeiling('bare-queue.ts', env)]);
    await admin(env, service.port, 'POST', '/admin/apps', { appId: 1, appName: 'bench-single', step: 10_000 });
    const paths = gatePassPerShard().map((g) => `/api/id/1?gatePass=${encodeURIComponent(g)}`);
    const perList = Math.ceil((1.2 * (warmup + requests * rounds) * subjects.length) / 64);
    for (const [name, s] of subjects) {
      await topUp(env, service.port, 1, perList);
      const pid = s.child.pid as number;
      const t0 = Date.now();
      const w = await load(s.port, paths, warmup);
      console.error(`${name}: warm-up ${Date.now() - t0} ms`);
      const irs: number[] = [];
      for (let r = 0; r < rounds; r++) {
        execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
        const res = await load(s.port, paths, requests);
        execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
        if (res.other > 0) {
          console.error(`${name}: ${res.other} of ${requests} requests failed`);
        }
        irs.push(dumpedIr(dir, pid) / requests);
      }
      console.log(
        `${name.padEnd(8)} Ir/req ${irs.map((x) => Math.round(x)).join(' ')}  (warm-up ${w.ok} ok, ${w.other} failed)`,
      );
    }
  } finally {
    for (const [, s] of subjects) {
      await s.stop();
    }
    await cleanRedis(env);
    await dropDatabase(env);
    if (process.env.CALLGRIND_KEEP === undefined) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
