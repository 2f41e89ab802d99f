/**
 * Queue single get: user and system CPU per request of the service (dist/), of other builds of it
 * and of the bare ceiling, measured in turns under wrk (one run per subject and round), medians
 * at the end. Needs wrk and the bench's MariaDB user; take the bench lock:
 *
 *   BENCH_MYSQL_URL=mysql://shardleaf_bench:shardleaf_bench@127.0.0.1:3306 flock /tmp/shardleaf-bench.lock \
 *     node -r ts-node/register/transpile-only scripts/bench/queue-cpu-split.ts [rounds=3] [seconds=3]
 *
 * The ceiling is servers/bare-queue.ts with the service's Redis client options (auto-pipelining on);
 * BARE_AUTO_PIPELINING=0 measures it without.
 * SERVICES="base=/other/worktree/dist/src/main.js,…": more builds, each a subject of its own.
 * PERF_STAT=1: system calls per request (perf stat on the server's pid). PERF_RECORD=DIR: a
 * `perf record -e cpu-clock` per run into DIR (start with NODE_OPTIONS=--perf-basic-prof for JS names).
 * PROFILE_DIR=DIR: `--cpu-prof` of every server (CPU_PROF_INTERVAL=µs: its sampling interval, default Node's 1000).
 * PIN=1: servers pinned to one CPU and wrk to the others, as `npm run bench` does (lib/placement.ts);
 * unpinned by default, where the servers share the CPUs with wrk and Redis.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** utime, stime (µs) of a process. */
function times(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(f[11]) * 1e4, Number(f[12]) * 1e4];
}

function perfRecord(pid: number, seconds: number, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '4000', '-o', out, '-p', String(pid), '--', 'sleep', String(seconds)], { stdio: 'ignore' });
    p.on('error', reject);
    p.on('close', () => resolve());
  });
}
import { benchEnv, cleanRedis, dropDatabase, ensureBuild, recreateDatabase, admin } from './lib/bench-env';
import { runWrk } from './lib/load';
import { startCeiling, startService } from './lib/service';
import { gatePassPerShard, topUp } from './cases/queue';
import type { ServerProc } from './lib/proc';
import { decidePlacement } from './lib/placement';

const EVENTS = [
  'task-clock',
  'raw_syscalls:sys_enter',
  'syscalls:sys_enter_write',
  'syscalls:sys_enter_writev',
  'syscalls:sys_enter_read',
  'syscalls:sys_enter_epoll_wait',
  'syscalls:sys_enter_epoll_ctl',
  'syscalls:sys_enter_futex',
  'syscalls:sys_enter_getrandom',
];

function perfStat(pid: number, seconds: number): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const p = spawn('perf', ['stat', '-x', ',', '-e', EVENTS.join(','), '-p', String(pid), '--', 'sleep', String(seconds)]);
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', () => {
      const out: Record<string, number> = {};
      for (const line of err.split('\n')) {
        const f = line.split(',');
        if (f.length > 3 && f[0] !== '') {
          out[f[2]] = Number(f[0]);
        }
      }
      resolve(out);
    });
  });
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const seconds = Number(process.argv[3] ?? 3);
  const env = benchEnv();
  if (process.env.PIN === '1') {
    console.error(decidePlacement(true).text);
  }
  await ensureBuild((s) => console.error(s));
  await recreateDatabase(env);
  const profileDir = process.env.PROFILE_DIR;
  const service = await startService(env, profileDir);
  const bare = await startCeiling('bare-queue.ts', env, profileDir);
  const variants: Array<[string, ServerProc]> = [];
  for (const spec of (process.env.SERVICES ?? '').split(',').filter(Boolean)) {
    const [vname, mainJs] = spec.split('=');
    variants.push([vname, await startService(env, profileDir, {}, undefined, mainJs)]);
  }
  const total = new Map<string, number>();
  try {
    await admin(env, service.port, 'POST', '/admin/apps', { appId: 1, appName: 'bench-single', step: 10_000 });
    const paths = gatePassPerShard().map((g) => `/api/id/1?gatePass=${encodeURIComponent(g)}`);
    const subjects: Array<[string, ServerProc]> = [['service', service], ...variants, ['bare', bare]];
    const cpu = new Map<string, number[]>();
    for (const [, s] of subjects) {
      await topUp(env, service.port, 1, Math.ceil((60_000 * seconds) / 64));
      const w = await runWrk({ port: s.port, paths, connections: 64, durationS: 1 });
      total.set(String(s.child.pid), w.requests);
    }
    for (let r = 0; r < rounds; r++) {
      for (const [name, s] of subjects) {
        await topUp(env, service.port, 1, Math.ceil((60_000 * (seconds + 1)) / 64));
        const pid = s.child.pid as number;
        const t0 = times(pid);
        const statP = process.env.PERF_RECORD
          ? perfRecord(pid, seconds, `${process.env.PERF_RECORD}/${name}.${r}.data`).then((): Record<string, number> => ({}))
          : process.env.PERF_STAT
            ? perfStat(pid, seconds)
            : Promise.resolve({} as Record<string, number>);
        const res = await runWrk({ port: s.port, paths, connections: 64, durationS: seconds });
        const st = await statP;
        const t1 = times(pid);
        const n = res.requests;
        total.set(String(s.child.pid), (total.get(String(s.child.pid)) ?? 0) + n);
        const per = (k: string): string => ((st[k] ?? NaN) / n).toFixed(3);
        const procCpu = (t1[0] - t0[0] + t1[1] - t0[1]) / n;
        cpu.set(name, [...(cpu.get(name) ?? []), procCpu]);
        // With PERF_STAT the columns perf counted; without, the CPU from /proc only (no NaN columns).
        const perfColumns =
          st['task-clock'] === undefined
            ? ''
            : ` perf cpu µs/req ${((st['task-clock'] * 1000) / n).toFixed(1)} ` +
              `sys/req ${per('raw_syscalls:sys_enter')} write ${per('syscalls:sys_enter_write')} writev ${per('syscalls:sys_enter_writev')} ` +
              `read ${per('syscalls:sys_enter_read')} epoll_wait ${per('syscalls:sys_enter_epoll_wait')} epoll_ctl ${per('syscalls:sys_enter_epoll_ctl')} ` +
              `futex ${per('syscalls:sys_enter_futex')} getrandom ${per('syscalls:sys_enter_getrandom')}`;
        console.log(
          `${name.padEnd(8)} req/s ${Math.round(res.reqPerSec)} non2xx ${res.non2xx} cpu µs/req ${procCpu.toFixed(1)} ` +
            `user ${((t1[0] - t0[0]) / n).toFixed(1)} sys ${((t1[1] - t0[1]) / n).toFixed(1)}${perfColumns}`,
        );
      }
    }
    const med = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
    for (const [name, v] of cpu) {
      console.log(`median cpu µs/req ${name}: ${med(v).toFixed(1)}  (runs ${v.map((x) => x.toFixed(1)).join(' ')})`);
    }
    console.log(`requests by pid: ${JSON.stringify(Object.fromEntries(total))} (service ${service.child.pid}, bare ${bare.child.pid})`);
  } finally {
    await service.stop();
    await bare.stop();
    for (const [, v] of variants) {
      await v.stop();
    }
    await cleanRedis(env);
    await dropDatabase(env);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
