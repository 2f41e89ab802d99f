/**
 * CPU per ID of the batch path, in process, old and new alternated on the same Redis:
 * - old: the pop-with-length script (LPOP inside Lua), parseQueueEntry → bigint, composeQueueId,
 *   toString, JSON.stringify (the request path before issue #11's batch work);
 * - new: LPOP + LLEN in one round trip, acceptEntries (numbers), batchBody (the body from digits).
 * Prints client CPU ns/ID (this process) and Redis CPU ns/ID (INFO commandstats) per round. Use a
 * Redis of its own: the list `bench:batch-cost` is created and deleted, and CONFIG RESETSTAT is run.
 * Usage: node -r ts-node/register/transpile-only scripts/bench/batch-cost.ts redis://127.0.0.1:PORT [batches] [rounds]
 */
import Redis from 'ioredis';
import { acceptEntries, batchBody } from '../../src/queue-id/core/queue-batch';
import { composeQueueId, parseQueueEntry } from '../../src/queue-id/core/queue-id-layout';
import { popWithLength } from '../../src/queue-id/pop-with-length';

const N = 1000;
const KEY = 'bench:batch-cost';
const SHARD = 5;
const APP = 7;
const MAX_INDEX = 10n ** 14n;

async function fill(redis: Redis, ids: number): Promise<void> {
  await redis.del(KEY);
  for (let first = 100_000_000; first < 100_000_000 + ids; first += 10_000) {
    const args: string[] = [];
    for (let i = first; i < first + 10_000; i++) {
      args.push(String(i));
    }
    await redis.rpush(KEY, ...args);
  }
}

async function oldBatch(redis: Redis): Promise<number> {
  const { entries } = await popWithLength(redis, KEY, N);
  const out: bigint[] = [];
  for (const e of entries) {
    const i = parseQueueEntry(e);
    if (i !== undefined && i <= MAX_INDEX) {
      out.push(i);
    }
  }
  return JSON.stringify({ ids: out.map((i) => composeQueueId(i, SHARD, APP).toString()) }).length;
}

async function newBatch(redis: Redis): Promise<number> {
  const popped = redis.lpopBuffer(KEY, N);
  const length = redis.llen(KEY).then(Number, () => -1);
  const entries = (await popped) ?? [];
  await length;
  const out: number[] = [];
  acceptEntries(entries, MAX_INDEX, out);
  return batchBody(out, SHARD, APP).length;
}

async function measure(redis: Redis, batches: number, fn: (r: Redis) => Promise<number>): Promise<{ client: number; redis: number }> {
  await fill(redis, N * batches + N);
  await redis.config('RESETSTAT');
  let done = 0;
  const cpu0 = process.cpuUsage();
  const worker = async (): Promise<void> => {
    while (done < batches) {
      done++;
      await fn(redis);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  const cpu = process.cpuUsage(cpu0);
  const info = await redis.info('commandstats');
  let usec = 0;
  for (const m of info.matchAll(/cmdstat_(evalsha|eval|lpop|llen):calls=\d+,usec=(\d+)/g)) {
    usec += Number(m[2]);
  }
  const ids = N * batches;
  return { client: ((cpu.user + cpu.system) * 1000) / ids, redis: (usec * 1000) / ids };
}

async function main(): Promise<void> {
  const [url, batchesRaw, roundsRaw] = process.argv.slice(2);
  if (!url) {
    throw new Error('usage: batch-cost.ts redis://host:port [batches] [rounds]');
  }
  const redis = new Redis(url);
  const batches = Number(batchesRaw ?? 2000);
  const rounds = Number(roundsRaw ?? 3);
  try {
    for (let r = 1; r <= rounds; r++) {
      for (const [name, fn] of [
        ['old (script pop, bigint, JSON.stringify)', oldBatch],
        ['new (LPOP + LLEN, numbers, body from digits)', newBatch],
      ] as const) {
        const m = await measure(redis, batches, fn);
        console.log(`round ${r} ${name}: client ${m.client.toFixed(1)} ns/ID, Redis ${m.redis.toFixed(1)} ns/ID`);
      }
    }
  } finally {
    await redis.del(KEY);
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
