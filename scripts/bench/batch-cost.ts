/**
 * CPU per ID of the batch path, in process, old and new alternated on the same Redis:
 * - old: the pop-with-length script (LPOP inside Lua), parseQueueEntry → bigint, composeQueueId,
 *   toString, JSON.stringify (the request path before issue #11's batch work);
 * - ioredis: LPOP + LLEN in one round trip through ioredis (a Buffer per entry), acceptEntries
 *   (numbers), batchBody (the body from digits): the request path of issue #11;
 * - raw: the same commands on the pop connection (src/queue-id/pop-connection.ts), the
 *   reply read straight into indexes (core/resp-pop-reader.ts), batchBody: the request path since.
 * Prints client CPU ns/ID (this process) and Redis CPU ns/ID (INFO commandstats) per round. Use a
 * Redis of its own: the list `bench:batch-cost` is created and deleted, and CONFIG RESETSTAT is run.
 * Usage: node -r ts-node/register/transpile-only scripts/bench/batch-cost.ts redis://127.0.0.1:PORT [batches] [rounds]
 * (BATCH_COST_PATHS=ioredis,raw runs only the paths whose names start so).
 */
import Redis from 'ioredis';
import { acceptEntries, batchBody } from '../../src/queue-id/core/queue-batch';
import { composeQueueId, parseQueueEntry } from '../../src/queue-id/core/queue-id-layout';
import { redisUrlParts } from '../../src/config/redis-config';
import { popWithLength } from './lib/pop-with-length';
import { PopConnection } from '../../src/queue-id/redis/pop-connection';

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

let raw: PopConnection;

/** #11's body: one string per ID, joined (kept here as the reference the Buffer body is measured against). */
function stringBody(indexes: readonly number[], shardId: number, appId: number): string {
  const low = shardId * 256 + appId;
  const parts = new Array<string>(indexes.length);
  for (let k = 0; k < indexes.length; k++) {
    parts[k] = String(indexes[k] * 16384 + low);
  }
  return `{"ids":["${parts.join('","')}"]}`;
}

async function rawStringBatch(): Promise<number> {
  const { indexes } = await raw.pop(KEY, N, MAX_INDEX, true);
  return stringBody(indexes, SHARD, APP).length;
}

async function rawBatch(): Promise<number> {
  const { indexes } = await raw.pop(KEY, N, MAX_INDEX, true);
  return batchBody(indexes, SHARD, APP).length;
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
  raw = new PopConnection(redisUrlParts(url), 2000);
  const only = process.env.BATCH_COST_PATHS?.split(',');
  const batches = Number(batchesRaw ?? 2000);
  const rounds = Number(roundsRaw ?? 3);
  try {
    for (let r = 1; r <= rounds; r++) {
      for (const [name, fn] of [
        ['old (script pop, bigint, JSON.stringify)', oldBatch],
        ['ioredis (LPOP + LLEN, numbers, body from digits)', newBatch],
        ['raw+string (the raw pop, #11 string body)', rawStringBatch],
        ['raw (LPOP + LLEN on its own connection, read into indexes, Buffer body)', rawBatch],
      ] as const) {
        if (only && !only.some((o) => name.startsWith(o))) {
          continue;
        }
        const m = await measure(redis, batches, fn);
        console.log(`round ${r} ${name}: client ${m.client.toFixed(1)} ns/ID, Redis ${m.redis.toFixed(1)} ns/ID`);
      }
    }
  } finally {
    await redis.del(KEY);
    redis.disconnect();
    await raw.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
