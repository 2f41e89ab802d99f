/**
 * Micro-benchmark of the request path's pop (issue 16): what knowing the list length after a pop
 * costs. `node -r ts-node/register/transpile-only scripts/bench/pop-cost.ts [ops] [concurrency]`
 *
 * On a private redis-server (a free port, no persistence; killed at the end), alternated rounds of:
 * - `LPOP key` (lpopBuffer): the pop with refill-ahead off;
 * - `EVALSHA` of POP_WITH_LENGTH_LUA (LPOP key 1 + LLEN in one script): the reading pop until
 *   2026-11-27 (lib/pop-with-length.ts);
 * - a pipeline `LPOP key` + `LLEN key` (two commands, one round trip): the reading pop since then
 *   (on the service's own pop connection on a standalone Redis, RequestPops.popReadingLength);
 * - from issue 11 to 2026-11-27, the single get's pop: a plain LPOP while the shard's length-read
 *   budget (core/length-reads.ts) lasts, the script when it is spent.
 * Reports ops/s, client CPU µs per op (process.cpuUsage: the service's own cost, the one that
 * bounds its throughput) and Redis CPU µs per op (INFO commandstats of the private server).
 */
import Redis from 'ioredis';
import { startPrivateRedis } from './lib/private-redis';
import { pushRange } from '../../src/queue-id/redis/segment-push';
import { POP_WITH_LENGTH_LUA, popWithLength } from './lib/pop-with-length';
import { LengthReads } from '../../src/queue-id/core/length-reads';

/** The single get's pop from issue 11 to 2026-11-27: plain while the length-read budget lasts, else the script. */
const reads = new LengthReads();
/** The same since 2026-11-27, the length read by `LPOP` + `LLEN` sent together. */
const pipelinedReads = new LengthReads();
/** The threshold of a shard at step 1,000 (QUEUE_IDLE_RATIO 0.2). */
const THRESHOLD = 200;

const OPS = Number(process.argv[2] ?? 200_000);
const CONCURRENCY = Number(process.argv[3] ?? 50);
const ROUNDS = 3;
const KEY = 'popcost:list';

type Variant = { name: string; pop: (redis: Redis) => Promise<number> };

const VARIANTS: Variant[] = [
  {
    name: 'LPOP',
    pop: async (redis) => ((await redis.lpopBuffer(KEY)) === null ? 0 : 1),
  },
  {
    name: 'EVALSHA LPOP+LLEN (pop-with-length.ts)',
    pop: async (redis) => (await popWithLength(redis, KEY, 1)).entries.length,
  },
  {
    name: 'LPOP, or EVALSHA when the length-read budget is spent (until 2026-11-27)',
    pop: async (redis) => {
      if (reads.tryPlain(1, 0)) {
        return (await redis.lpopBuffer(KEY)) === null ? 0 : 1;
      }
      const ticket = reads.readingPop(1, 0, 1);
      const popped = await popWithLength(redis, KEY, 1);
      reads.read(1, 0, ticket, popped.length, THRESHOLD);
      return popped.entries.length;
    },
  },
  {
    name: 'pipeline LPOP + LLEN',
    pop: async (redis) => {
      const replies = (await redis.pipeline().lpopBuffer(KEY).llen(KEY).exec()) ?? [];
      return replies[0]?.[1] === null ? 0 : 1;
    },
  },
  {
    name: 'LPOP, or pipeline LPOP + LLEN when the budget is spent (since 2026-11-27)',
    pop: async (redis) => {
      if (pipelinedReads.tryPlain(1, 0)) {
        return (await redis.lpopBuffer(KEY)) === null ? 0 : 1;
      }
      const ticket = pipelinedReads.readingPop(1, 0, 1);
      const replies = (await redis.pipeline().lpopBuffer(KEY).llen(KEY).exec()) ?? [];
      pipelinedReads.read(1, 0, ticket, Number(replies[1]?.[1] ?? 0), THRESHOLD);
      return replies[0]?.[1] === null ? 0 : 1;
    },
  },
];



async function fill(redis: Redis, n: number): Promise<void> {
  await redis.del(KEY, `{${KEY}}:pushed`);
  await pushRange(redis, KEY, `{${KEY}}:pushed`, 1n, BigInt(n));
}

async function commandUsec(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(lpop|llen|evalsha|eval):calls=\d+,usec=(\d+)/gm)) {
    usec += Number(m[2]);
  }
  return usec;
}

async function run(redis: Redis, admin: Redis, v: Variant): Promise<{ opsPerSec: number; clientUs: number; redisUs: number }> {
  await fill(redis, OPS + 1000);
  const usec0 = await commandUsec(admin);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let next = 0;
  const loop = async () => {
    while (next++ < OPS) {
      await v.pop(redis);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const usec1 = await commandUsec(admin);
  return { opsPerSec: OPS / seconds, clientUs: (cpu.user + cpu.system) / OPS, redisUs: (usec1 - usec0) / OPS };
}

async function main(): Promise<void> {
  const { port, stop } = await startPrivateRedis();
  try {
    const redis = new Redis({ port, host: '127.0.0.1' });
    const admin = new Redis({ port, host: '127.0.0.1' });
    await redis.script('LOAD', POP_WITH_LENGTH_LUA);
    const results = new Map<string, Array<{ opsPerSec: number; clientUs: number; redisUs: number }>>();
    // A warm-up round, then alternated measured rounds.
    for (const v of VARIANTS) {
      await run(redis, admin, v);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of VARIANTS) {
        const r = await run(redis, admin, v);
        results.set(v.name, [...(results.get(v.name) ?? []), r]);
        console.error(
          `round ${round + 1} ${v.name}: ${Math.round(r.opsPerSec)} ops/s, client ${r.clientUs.toFixed(2)} µs/op, redis ${r.redisUs.toFixed(2)} µs/op`,
        );
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`\n${OPS} pops × ${ROUNDS} rounds, ${CONCURRENCY} concurrent, median round:`);
    console.log('| pop | ops/s | client CPU µs/op | Redis CPU µs/op |');
    console.log('|---|---:|---:|---:|');
    for (const [name, rs] of results) {
      console.log(
        `| ${name} | ${Math.round(med(rs.map((r) => r.opsPerSec)))} | ${med(rs.map((r) => r.clientUs)).toFixed(2)} | ${med(rs.map((r) => r.redisUs)).toFixed(2)} |`,
      );
    }
    redis.disconnect();
    admin.disconnect();
  } finally {
    stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
