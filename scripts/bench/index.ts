/**
 * `npm run bench [-- --quick] [--runs N] [--duration S] [--connections C] [--only queue,batch,segment,snowflake,refill,ahead,client,scale] [--keep-db] [--no-pin]`
 *
 * Builds dist/ if stale, (re)creates the bench database (BENCH_MYSQL_URL, default
 * mysql://root@127.0.0.1:3306, database shardleaf_bench), then runs every case with the service and
 * each ceiling as separate processes and autocannon (and wrk) as another, and prints one table. The
 * HTTP servers run pinned to one CPU and the load generators to the others when taskset and two
 * CPUs are there (lib/placement.ts). Redis keys live under a bench-only prefix and are deleted at the
 * end.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { aheadCase } from './cases/ahead';
import { clientCase } from './cases/client';
import { queueBatchCase, queueSingleCase } from './cases/queue';
import { refillCase } from './cases/refill';
import { scaleCase } from './cases/scale';
import { segmentCase } from './cases/segment';
import { snowflakeCase } from './cases/snowflake';
import { benchEnv, cleanRedis, dropDatabase, ensureBuild, localRedisPid, recreateDatabase } from './lib/bench-env';
import { parseOptions, wants } from './lib/options';
import { addDependencyPids, decidePlacement } from './lib/placement';
import { describeServerFlags } from './lib/proc';
import { Row, formatTable } from './lib/table';

function log(s: string): void {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const env = benchEnv();
  const started = Date.now();
  const loadBefore = loadavg()[0];
  const placed = decidePlacement(opts.pin);
  log(placed.text);
  log(describeServerFlags());
  const redisPid = placed.server === undefined ? undefined : await localRedisPid(env);
  if (redisPid !== undefined) {
    addDependencyPids([redisPid]);
    log(`Redis (pid ${redisPid}) is on the request path: its CPU is not counted as others' on the servers' CPU`);
  }
  await ensureBuild(log);
  await recreateDatabase(env);
  const rows: Row[] = [];
  try {
    if (wants(opts, 'queue')) {
      rows.push(...(await queueSingleCase(opts, env, log)));
    }
    if (wants(opts, 'batch')) {
      rows.push(...(await queueBatchCase(opts, env, log)));
    }
    if (wants(opts, 'segment')) {
      rows.push(...(await segmentCase(opts, env, log)));
    }
    if (wants(opts, 'snowflake')) {
      rows.push(...(await snowflakeCase(opts, log)));
    }
    if (wants(opts, 'refill')) {
      rows.push(...(await refillCase(opts, env, log)));
    }
    if (wants(opts, 'ahead')) {
      rows.push(...(await aheadCase(opts, env, log)));
    }
    if (wants(opts, 'client')) {
      rows.push(...(await clientCase(opts, env, log)));
    }
    if (wants(opts, 'scale')) {
      // The scale case creates apps 0…N−1 in an empty database and measures Redis memory from an
      // empty prefix: what the cases before it created (apps 1 and 2, their lists) goes first.
      await recreateDatabase(env);
      await cleanRedis(env);
      rows.push(...(await scaleCase(opts, env, log)));
    }
  } finally {
    const deleted = await cleanRedis(env);
    log(`deleted ${deleted} Redis keys under ${env.keyPrefix}`);
    if (!opts.keepDb) {
      await dropDatabase(env);
    }
  }
  const cpu = cpus();
  console.log(
    `\nshardleaf bench ${new Date().toISOString()} — ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
      `HTTP comparisons: ${opts.rounds} clean rounds × ${opts.roundS} s (ratio: median of back-to-back pairs), ` +
      `other cases: ${opts.runs} runs × ${opts.durationS} s; ${opts.connections} connections (median run shown); ` +
      `${placed.text}; 1-min load average ${loadBefore.toFixed(2)} at start, ` +
      `${loadavg()[0].toFixed(2)} at end\n`,
  );
  console.log(formatTable(rows));
  console.log(`\n(${Math.round((Date.now() - started) / 1000)} s)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
