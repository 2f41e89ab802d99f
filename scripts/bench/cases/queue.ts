import { shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { BenchEnv, admin } from '../lib/bench-env';
import { failures, httpRows, measure } from '../lib/compare';
import { BenchOptions } from '../lib/options';
import { startCeiling, startService } from '../lib/service';
import { Row } from '../lib/table';

const SINGLE_APP = 1;
const BATCH_APP = 2;
const BATCH = 1000;

/** One gatePass per shard, so a load run spreads over all 64 lists as real users do. */
export function gatePassPerShard(): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < 64; i++) {
    const gatePass = `user${i}@example.com`;
    const shard = shardOf(gatePass);
    if (!byShard.has(shard)) {
      byShard.set(shard, gatePass);
    }
  }
  return [...byShard.values()];
}

interface ShardView {
  queueLength: number;
}

/** Refills every shard of the app (one segment each) until each list holds at least `min`. */
export async function topUp(env: BenchEnv, port: number, appId: number, min: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const view = (await admin(env, port, 'GET', `/admin/apps/${appId}`)) as { shards: ShardView[] };
    if (Math.min(...view.shards.map((s) => s.queueLength)) >= min) {
      return;
    }
    await admin(env, port, 'POST', `/admin/apps/${appId}/refill`);
  }
}

/** bare-queue.ts's default step (BARE_STEP): it refills a list that falls below it. */
const BARE_STEP = 10_000;

/** Fills every list of a bare-queue.ts server to at least `min` (its `POST /top-up`). */
export async function topUpBare(port: number, min: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/top-up?min=${min}`, { method: 'POST' });
  if (!res.ok) {
    throw new Error(`bare-queue.ts top-up answered ${res.status}`);
  }
  await res.arrayBuffer();
}

/**
 * Queue single get vs the bare ceilings (servers/bare-queue.ts): the target's, bare Fastify + ioredis
 * with the service's client options, auto-pipelining on, LPOP + compose, refilling its own lists on
 * a connection of its own; and, since the service pops on a connection of its own (`LPOP key 1`
 * read into an index, pop-connection.ts), the same bare server popping that way (`BARE_POP=raw`):
 * the strongest ceiling with the service's own client. The service runs between the two in every
 * round (compare.ts: roundOrder), next to each; the first row's ratio is the target's.
 */
export async function queueSingleCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('queue single get vs bare fastify + ioredis (auto-pipelining), and vs bare fastify + the own pop connection');
  const service = await startService(env, opts.profileDir);
  const bare = await startCeiling('bare-queue.ts', env, opts.profileDir);
  const bareRaw = await startCeiling('bare-queue.ts', env, opts.profileDir, { BARE_POP: 'raw', KEY_PREFIX: `${env.keyPrefix}raw.` }, 'bare-queue.ts (raw pop)');
  try {
    const step = 10_000;
    await admin(env, service.port, 'POST', '/admin/apps', { appId: SINGLE_APP, appName: 'bench-single', step });
    const paths = gatePassPerShard().map((g) => `/api/id/${SINGLE_APP}?gatePass=${encodeURIComponent(g)}`);
    // The service's lists: enough for a run (at most ~60k req/s).
    const perRun = Math.ceil((60_000 * opts.durationS) / 64);
    const before = (): Promise<void> => topUp(env, service.port, SINGLE_APP, perRun);
    // The ceilings' lists too, past one step (their refill point): no refill of theirs inside a run.
    const ceilingBefore = (port: number) => (): Promise<void> => topUpBare(port, perRun + BARE_STEP);
    const [ceiling, svc, rawCeiling] = await measure(
      opts,
      [
        { server: bare, paths, before: ceilingBefore(bare.port) },
        { server: service, paths, before },
        { server: bareRaw, paths, before: ceilingBefore(bareRaw.port) },
      ],
      log,
    );
    return [
      ...httpRows(
        {
          case: 'queue single get',
          subject: 'shardleaf GET /api/id/1',
          ceiling: { result: ceiling, name: 'bare fastify + ioredis, auto-pipelining' },
          target: { min: 0.92, text: '≥ 0.92 (req/s and CPU)' },
        },
        svc,
      ),
      ...httpRows(
        {
          case: 'queue single get',
          subject: 'shardleaf GET /api/id/1, vs the own-connection ceiling',
          ceiling: { result: rawCeiling, name: 'bare fastify + the own pop connection (LPOP key 1)' },
          note: 'the strongest ceiling with the client the service uses; no target of its own',
        },
        svc,
      ),
      ...httpRows({ case: 'queue single get', subject: 'ceiling: bare fastify + ioredis (auto-pipelining) LPOP + compose' }, ceiling),
      ...httpRows({ case: 'queue single get', subject: 'ceiling: bare fastify + own pop connection, LPOP key 1 + compose' }, rawCeiling),
    ];
  } finally {
    await service.stop();
    await bare.stop();
    await bareRaw.stop();
  }
}

/** Queue batch `count=1000`: ids/s over HTTP (lists pre-filled; the refill rows show refill cost). */
export async function queueBatchCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log(`queue batch count=${BATCH}`);
  const service = await startService(env, opts.profileDir);
  try {
    const step = 25_000;
    await admin(env, service.port, 'POST', '/admin/apps', { appId: BATCH_APP, appName: 'bench-batch', step });
    const paths = gatePassPerShard().map(
      (g) => `/api/id/${BATCH_APP}?gatePass=${encodeURIComponent(g)}&count=${BATCH}`,
    );
    // Enough for a quick run at ~6M ids/s (what the batch pop reaches since its own connection);
    // a list drained anyway is refilled ahead or on demand, inside the run.
    const perRun = Math.min(Math.ceil((6_000_000 * opts.durationS) / 64), 8 * step);
    const before = (): Promise<void> => topUp(env, service.port, BATCH_APP, perRun);
    const [svc] = await measure(opts, [{ server: service, paths, before }], log);
    // One row per load generator (autocannon, then wrk when installed).
    return [svc, ...(svc.wrk ? [svc.wrk] : [])].map((r) => ({
      case: `queue batch count=${BATCH}`,
      subject: `shardleaf GET /api/id/${BATCH_APP}?count=${BATCH}`,
      load: r.generator ?? 'autocannon',
      reqPerSec: r.reqPerSec,
      idsPerSec: r.reqPerSec * BATCH,
      p50Ms: r.p50,
      p99Ms: r.p99,
      cpuUsPerReq: r.cpuUsPerReq,
      target: '≥ 5,000,000 ids/s',
      met: r.reqPerSec * BATCH >= 5_000_000,
      note: failures(r),
    }));
  } finally {
    await service.stop();
  }
}
