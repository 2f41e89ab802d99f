/**
 * Long alternated run of the service against the Nest constant server, to see whether a server's
 * CPU per request steps up after a while (perf/slowdown; docs/performance.md, "A step after
 * ~105 s"). Pinned as the bench pins; wrk -t1 -c64 in rounds of SLOW_RUN_S per subject, the order
 * reversed every other round. The bench's servers run with V8's memory reducer off
 * (lib/proc.ts serverNodeFlags): `BENCH_MEMORY_REDUCER=on` reproduces the step.
 *
 *   BENCH_MEMORY_REDUCER=on node -r ts-node/register/transpile-only scripts/bench/slowdown.ts
 *
 * Env: SLOW_SECONDS (total, default 300), SLOW_RUN_S (one wrk run, default 5), SLOW_SUBJECTS
 * (`seg,snow`, `seg` or `snow`), SLOW_NODE_OPTIONS (NODE_OPTIONS of the service), SLOW_NODE_ARGS /
 * SLOW_CEIL_NODE_ARGS (node flags of the service / the constant server, e.g. `--trace-gc`,
 * `--perf-basic-prof`), SLOW_SERVICE_ENV (JSON of extra service env), SLOW_LOG / SLOW_CEIL_LOG
 * (files for their stdout+stderr), SLOW_PROBE (a node script run on the servers' CPU after each
 * run, its output printed), SLOW_DB (database, default shardleaf_slowdown: not the bench's).
 * Prints one line per run: time since start, subject, req/s, p99, server CPU µs/req, load average,
 * requests served so far, RSS, V8 heap used, minor/major faults and voluntary/involuntary switches.
 */
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, benchEnv, dropDatabase, recreateDatabase } from './lib/bench-env';
import { cpuReader, watchOthers } from './lib/cpu';
import { runWrk } from './lib/load';
import { decidePlacement } from './lib/placement';
import { ServerProc, describeServerFlags, runCommand } from './lib/proc';
import { startCeiling, startService } from './lib/service';

interface Subject {
  name: string;
  server: ServerProc;
  path: string;
  served: number;
}

function procStat(pid: number): { minflt: number; majflt: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { minflt: Number(f[7]), majflt: Number(f[9]) };
}

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+)/.exec(line);
    if (m !== null) {
      out[m[1]] = Number(m[2]);
    }
  }
  return out;
}

async function heapUsed(port: number, prefix: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const m = new RegExp(`^${prefix}nodejs_heap_size_used_bytes (\\S+)`, 'm').exec(text);
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

/**
 * Runs `start` with process.execPath swapped for a wrapper script that adds `args` to node's
 * command line (startServer spawns process.execPath).
 */
async function startNodeWith<T>(args: string[], start: () => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'slow-node-'));
  const wrapper = join(dir, 'node');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${process.execPath} ${args.join(' ')} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const real = process.execPath;
  process.execPath = wrapper;
  try {
    return await start();
  } finally {
    process.execPath = real;
  }
}

async function main(): Promise<void> {
  const totalS = Number(process.env.SLOW_SECONDS ?? 300);
  const runS = Number(process.env.SLOW_RUN_S ?? 5);
  const wanted = (process.env.SLOW_SUBJECTS ?? 'seg,snow').split(',');
  const placed = decidePlacement(true);
  console.log(placed.text);
  console.log(describeServerFlags());
  const env = { ...benchEnv(), database: process.env.SLOW_DB ?? 'shardleaf_slowdown' };
  await recreateDatabase(env);
  const extra: NodeJS.ProcessEnv = JSON.parse(process.env.SLOW_SERVICE_ENV ?? '{}') as NodeJS.ProcessEnv;
  if (process.env.SLOW_NODE_OPTIONS) {
    extra.NODE_OPTIONS = process.env.SLOW_NODE_OPTIONS;
  }
  const t0 = Date.now();
  // Node flags not allowed in NODE_OPTIONS (--trace-gc…): given through NODE_ARGS-style wrapping.
  const service = process.env.SLOW_NODE_ARGS
    ? await startNodeWith(process.env.SLOW_NODE_ARGS.split(' '), () => startService(env, undefined, extra))
    : await startService(env, undefined, extra);
  if (process.env.SLOW_LOG) {
    const out = createWriteStream(process.env.SLOW_LOG);
    service.child.stdout?.pipe(out);
    service.child.stderr?.pipe(out);
  }
  const ceilExtra: NodeJS.ProcessEnv = process.env.SLOW_CEIL_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SLOW_CEIL_NODE_OPTIONS } : {};
  const constant = process.env.SLOW_CEIL_NODE_ARGS
    ? await startNodeWith(process.env.SLOW_CEIL_NODE_ARGS.split(' '), () => startCeiling('nest-constant.ts', env, undefined, ceilExtra))
    : await startCeiling('nest-constant.ts', env, undefined, ceilExtra);
  if (process.env.SLOW_CEIL_LOG) {
    const out = createWriteStream(process.env.SLOW_CEIL_LOG);
    constant.child.stdout?.pipe(out);
    constant.child.stderr?.pipe(out);
  }
  console.log(`service pid ${service.child.pid} port ${service.port}; constant pid ${constant.child.pid} port ${constant.port}`);
  try {
    await admin(env, service.port, 'POST', '/admin/segment/tags', { tag: 'bench', step: 100_000 });
    const subjects: Subject[] = [];
    if (wanted.includes('seg')) {
      subjects.push({ name: 'segment', server: service, path: '/api/segment/get/bench', served: 0 });
    }
    subjects.push({ name: 'constant', server: constant, path: '/api/segment/get/bench', served: 0 });
    if (wanted.includes('snow')) {
      subjects.push({ name: 'snowflake', server: service, path: '/api/snowflake/get/bench', served: 0 });
    }
    const servedBy = new Map<number, number>();
    for (let round = 0; (Date.now() - t0) / 1000 < totalS; round++) {
      const order = round % 2 === 0 ? subjects : [...subjects].reverse();
      for (const s of order) {
        const pid = s.server.child.pid as number;
        const cpu = cpuReader(pid);
        const others = watchOthers({ serverPid: pid, cpus: placed.server ?? [], dependencyPids: [] });
        const c0 = cpu() ?? 0;
        const f0 = procStat(pid);
        const st0 = status(pid);
        const r = await runWrk({ port: s.server.port, paths: [s.path], connections: 64, durationS: runS });
        const c1 = cpu() ?? 0;
        const f1 = procStat(pid);
        const st1 = status(pid);
        const oth = others();
        s.served += r.requests;
        servedBy.set(pid, (servedBy.get(pid) ?? 0) + r.requests);
        const heap = s.server === service ? await heapUsed(service.port, 'shardleaf_') : undefined;
        const probe = process.env.SLOW_PROBE ? await runCommand('taskset', ['-c', String(placed.server?.[0] ?? 0), process.execPath, process.env.SLOW_PROBE]) : '';
        const la = loadavg().map((x) => x.toFixed(2)).join(' ');
        console.log(
          [
            `t=${((Date.now() - t0) / 1000).toFixed(0)}s`,
            `${s.name.padEnd(9)}`,
            `${r.reqPerSec.toFixed(0)} req/s`,
            `p99 ${r.p99.toFixed(2)} ms`,
            `${((c1 - c0) / r.requests).toFixed(2)} µs/req`,
            `others ${oth === undefined ? '?' : (oth * 100).toFixed(1)}%`,
            `served(pid) ${(servedBy.get(pid)! / 1e6).toFixed(2)}M`,
            `rss ${(st1.VmRSS / 1024).toFixed(0)}MB anon ${(st1.RssAnon / 1024).toFixed(0)} file ${(st1.RssFile / 1024).toFixed(0)}`,
            heap === undefined ? '' : `heap ${(heap / 1048576).toFixed(1)}MB`,
            `minflt ${f1.minflt - f0.minflt} majflt ${f1.majflt - f0.majflt}`,
            `vcs ${st1.voluntary_ctxt_switches - st0.voluntary_ctxt_switches} ivcs ${st1.nonvoluntary_ctxt_switches - st0.nonvoluntary_ctxt_switches}`,
            `non2xx ${r.non2xx}`,
            probe === '' ? '' : `probe ${probe.trim()}`,
            `load ${la}`,
          ].join(' | '),
        );
      }
    }
  } finally {
    await service.stop();
    await constant.stop();
    await dropDatabase(env);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
