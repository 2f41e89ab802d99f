/**
 * A subject and its ceiling loaded at the same time, both pinned to the servers' CPU, each by a
 * load generator of its own on the other CPU: both servers then share the same CPU through the
 * same moments, so what the host does to that CPU (on these VMs, the same server's CPU per
 * request swings 22–59 µs from one 1-s round to the next) hits both alike and cancels out of the
 * ratio. `npm run bench` alternates them instead (the method of the targets); this script is the
 * cross-check for when its rounds are too noisy to tell 0.95 from 1.05 (docs/performance.md).
 *
 * Per round and generator: req/s of each while both run, CPU per request of each (/proc), and the
 * ratios subject ÷ ceiling (req/s; CPU: ceiling's µs per request ÷ subject's). Medians at the end.
 * `aa` runs two copies of the ceiling against each other: the noise floor of the method.
 * CEILING_ENV (JSON) gives the queue ceiling settings of its own (`queue`, and the first copy of
 * `aa-queue`), AA2_ENV the second copy of `aa-queue` (bare-queue.ts: BARE_WITH_SERVICE, BARE_POP).
 * SERVICE_MAIN=/other/dist/src/main.js: another build of the service as the subject. LOAD=wrk: one generator only.
 * `ab-queue` runs two builds of the service against each other on the queue single get: the subject
 * SERVICE_MAIN_B, the "ceiling" SERVICE_MAIN (dist/ of this checkout by default), one fleet on the
 * same lists: a change measured with the host's swings cancelled. Run with both the same for its A/A.
 *
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306 flock /tmp/shardleaf-bench.lock \
 *     node -r ts-node/register/transpile-only scripts/bench/concurrent-pairs.ts \
 *     segment|snowflake|queue|aa-constant|aa-queue|ab-queue [rounds=7] [seconds=3] [connections=64]
 */
import { readFileSync } from 'node:fs';
import { admin, benchEnv, cleanRedis, dropDatabase, ensureBuild, recreateDatabase } from './lib/bench-env';
import { LoadResult, Generator, median, runLoadWith, wrkInstalled } from './lib/load';
import { decidePlacement } from './lib/placement';
import { ServerProc, describeServerFlags } from './lib/proc';
import { startCeiling, startService } from './lib/service';
import { gatePassPerShard, topUp, topUpBare } from './cases/queue';

/** User + system CPU of a process so far (µs). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 1e4;
}

interface Side {
  name: string;
  server: ServerProc;
  paths: string[];
}

interface Pair {
  subject: Side;
  ceiling: Side;
  /** Before each round (lists topped up). */
  before: () => Promise<void>;
  stop: () => Promise<void>;
}

async function pairFor(which: string, env: ReturnType<typeof benchEnv>): Promise<Pair> {
  if (which === 'segment' || which === 'snowflake' || which === 'aa-constant') {
    const constant = await startCeiling('nest-constant.ts', env);
    const other =
      which === 'aa-constant' ? await startCeiling('nest-constant.ts', env) : await startService(env, undefined, {}, undefined, process.env.SERVICE_MAIN);
    if (which === 'segment') {
      await admin(env, other.port, 'POST', '/admin/segment/tags', { tag: 'bench', step: 100_000 });
    }
    const path = which === 'snowflake' ? '/api/snowflake/get/bench' : '/api/segment/get/bench';
    return {
      subject: { name: which === 'aa-constant' ? 'constant #2' : `shardleaf ${which}`, server: other, paths: [path] },
      ceiling: { name: 'Nest + fastify constant', server: constant, paths: [path] },
      before: async () => undefined,
      stop: async () => {
        await other.stop();
        await constant.stop();
      },
    };
  }
  if (which === 'queue' || which === 'aa-queue' || which === 'ab-queue') {
    const paths = gatePassPerShard().map((g) => `/api/id/1?gatePass=${encodeURIComponent(g)}`);
    if (which === 'ab-queue') {
      const base = await startService(env, undefined, {}, undefined, process.env.SERVICE_MAIN);
      const changed = await startService(env, undefined, {}, undefined, process.env.SERVICE_MAIN_B);
      await admin(env, base.port, 'POST', '/admin/apps', { appId: 1, appName: 'bench-single', step: 10_000 });
      return {
        subject: { name: `B ${process.env.SERVICE_MAIN_B ?? 'dist'}`, server: changed, paths },
        ceiling: { name: `A ${process.env.SERVICE_MAIN ?? 'dist'}`, server: base, paths },
        before: () => topUp(env, base.port, 1, 40_000),
        stop: async () => {
          await changed.stop();
          await base.stop();
        },
      };
    }
    // CEILING_ENV (JSON): the queue ceiling's own settings; AA2_ENV: the second copy's in aa-queue
    // (bare-queue.ts: BARE_WITH_SERVICE). Both read before anything starts (bad JSON leaves nothing running).
    const ceilingEnv = JSON.parse(process.env.CEILING_ENV ?? '{}') as Record<string, string>;
    const aa2Env = JSON.parse(process.env.AA2_ENV ?? '{}') as Record<string, string>;
    const bare = await startCeiling('bare-queue.ts', env, undefined, ceilingEnv);
    if (which === 'aa-queue') {
      const bare2 = await startCeiling('bare-queue.ts', env, undefined, { KEY_PREFIX: `${env.keyPrefix}aa2.`, ...aa2Env });
      return {
        subject: { name: 'bare #2', server: bare2, paths },
        ceiling: { name: 'bare fastify + ioredis', server: bare, paths },
        // Both topped up before each round, so that neither refills (a 10,000-value RPUSH) inside one.
        before: async () => {
          await topUpBare(bare.port, 30_000);
          await topUpBare(bare2.port, 30_000);
        },
        stop: async () => {
          await bare2.stop();
          await bare.stop();
        },
      };
    }
    const service = await startService(env, undefined, {}, undefined, process.env.SERVICE_MAIN);
    await admin(env, service.port, 'POST', '/admin/apps', { appId: 1, appName: 'bench-single', step: 10_000 });
    return {
      subject: { name: 'shardleaf queue', server: service, paths },
      ceiling: { name: 'bare fastify + ioredis', server: bare, paths },
      before: async () => {
        await topUp(env, service.port, 1, 20_000);
        await topUpBare(bare.port, 30_000);
      },
      stop: async () => {
        await service.stop();
        await bare.stop();
      },
    };
  }
  throw new Error(`unknown case ${which}: segment|snowflake|queue|aa-constant|aa-queue|ab-queue`);
}

/** Both sides under load at once; each side's requests and CPU per request. */
async function together(pair: Pair, generator: Generator, seconds: number, connections: number): Promise<[LoadResult, number, LoadResult, number]> {
  const sides = [pair.subject, pair.ceiling];
  const pids = sides.map((s) => s.server.child.pid as number);
  const cpu0 = pids.map(cpuMicros);
  const results = await Promise.all(
    sides.map((s) => runLoadWith({ port: s.server.port, paths: s.paths, connections, durationS: seconds, generator })),
  );
  const cpu1 = pids.map(cpuMicros);
  return [results[0], (cpu1[0] - cpu0[0]) / results[0].requests, results[1], (cpu1[1] - cpu0[1]) / results[1].requests];
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'segment';
  const rounds = Number(process.argv[3] ?? 7);
  const seconds = Number(process.argv[4] ?? 3);
  const connections = Number(process.argv[5] ?? 64);
  const placed = decidePlacement(true);
  console.log(placed.text);
  console.log(describeServerFlags());
  if (placed.server === undefined) {
    throw new Error('needs two CPUs and taskset: both servers share the pinned servers\' CPU');
  }
  const env = benchEnv();
  await ensureBuild((s) => console.error(s));
  await recreateDatabase(env);
  const pair = await pairFor(which, env);
  const gens: Generator[] =
    process.env.LOAD !== undefined ? [process.env.LOAD as Generator] : wrkInstalled() === null ? ['autocannon'] : ['autocannon', 'wrk'];
  const ratios = new Map<Generator, { req: number[]; cpu: number[] }>(gens.map((g) => [g, { req: [], cpu: [] }]));
  try {
    for (const g of gens) {
      await pair.before();
      await together(pair, g, 2, connections); // warm-up, not counted
    }
    for (let r = 1; r <= rounds; r++) {
      for (const g of gens) {
        await pair.before();
        const [a, aCpu, b, bCpu] = await together(pair, g, seconds, connections);
        const req = a.reqPerSec / b.reqPerSec;
        const cpu = bCpu / aCpu;
        ratios.get(g)?.req.push(req);
        ratios.get(g)?.cpu.push(cpu);
        console.log(
          `round ${r} ${g.padEnd(10)} ${pair.subject.name}: ${Math.round(a.reqPerSec)} req/s ${aCpu.toFixed(1)} µs/req (non-2xx ${a.non2xx}) | ` +
            `${pair.ceiling.name}: ${Math.round(b.reqPerSec)} req/s ${bCpu.toFixed(1)} µs/req (non-2xx ${b.non2xx}) | ratio ${req.toFixed(3)} CPU ${cpu.toFixed(3)}`,
        );
      }
    }
    for (const [g, v] of ratios) {
      const show = (xs: number[]): string => `median ${median(xs).toFixed(3)} (min ${Math.min(...xs).toFixed(3)}, max ${Math.max(...xs).toFixed(3)})`;
      console.log(`${which} ${g}: ${pair.subject.name} ÷ ${pair.ceiling.name}, both loaded at once: req/s ${show(v.req)}; CPU ${show(v.cpu)}`);
    }
  } finally {
    await pair.stop();
    await cleanRedis(env);
    await dropDatabase(env);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
