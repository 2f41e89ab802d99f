/**
 * Micro-benchmark of the refill push (issue 11, item 4): one push of `n` indexes (default
 * 100,000) into an empty list, the former single Lua script against the claim + pre-encoded
 * RPUSH of segment-push.ts, alternated, on a private redis-server (a free port, no persistence;
 * killed at the end). `node -r ts-node/register/transpile-only scripts/bench/push-cost.ts [n] [tries]`
 *
 * Reports per variant the minimum and median wall time of a push (the caller's await: what a
 * refill waits for), the client CPU per push (process.cpuUsage) and Redis's CPU per push
 * (INFO commandstats usec of the commands it ran).
 */
import Redis from 'ioredis';
import { startPrivateRedis } from './lib/private-redis';
import { pushRange } from '../../src/queue-id/redis/segment-push';

const N = BigInt(process.argv[2] ?? 100_000);
const TRIES = Number(process.argv[3] ?? 9);
const KEY = 'pushcost:list';
const MARK = `{${KEY}}:pushed`;

/** The push before issue 11 item 4 (segment-push.ts at 6146d5e): runs of 10,000, each one script. */
const FORMER_LUA = `
local from = tonumber(ARGV[1])
local to = tonumber(ARGV[2])
local raw = redis.call('GET', KEYS[2])
local mark = -1
if raw then
  mark = tonumber(raw)
  if not mark then
    return redis.error_reply('ERR push marker ' .. KEYS[2] .. ' is not a number')
  end
end
if mark >= from then
  return {-1, string.format('%d', mark)}
end
local CHUNK = 1000
local first = from
while first <= to do
  local last = math.min(first + CHUNK - 1, to)
  local batch = {}
  local n = 0
  for i = first, last do
    n = n + 1
    batch[n] = string.format('%d', i)
  end
  redis.call('RPUSH', KEYS[1], unpack(batch))
  first = last + 1
end
redis.call('SET', KEYS[2], string.format('%d', to))
return {to - from + 1, string.format('%d', to)}
`;

async function formerPush(redis: Redis, from: bigint, to: bigint): Promise<void> {
  for (let first = from; first <= to; first += 10_000n) {
    const last = first + 9_999n < to ? first + 9_999n : to;
    await redis.eval(FORMER_LUA, 2, KEY, MARK, first.toString(), last.toString());
  }
}

type Variant = { name: string; push: (redis: Redis) => Promise<void> };

const VARIANTS: Variant[] = [
  { name: 'former: one Lua script per 10,000', push: (redis) => formerPush(redis, 1n, N) },
  {
    name: 'claim + pre-encoded RPUSH (segment-push.ts)',
    push: async (redis) => {
      const outcome = await pushRange(redis, KEY, MARK, 1n, N);
      if (outcome.pushed !== Number(N)) {
        throw new Error(`pushed ${outcome.pushed}`);
      }
    },
  },
];


async function redisUsec(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(rpush|eval|evalsha|get|set):calls=\d+,usec=(\d+)/gm)) {
    usec += Number(m[2]);
  }
  return usec;
}

interface Try {
  ms: number;
  clientMs: number;
  redisMs: number;
}

async function once(redis: Redis, admin: Redis, v: Variant): Promise<Try> {
  await admin.del(KEY, MARK);
  const usec0 = await redisUsec(admin);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await v.push(redis);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  const redisMs = ((await redisUsec(admin)) - usec0) / 1000;
  if ((await admin.llen(KEY)) !== Number(N)) {
    throw new Error(`${v.name}: list holds ${await admin.llen(KEY)}`);
  }
  return { ms, clientMs: (cpu.user + cpu.system) / 1000, redisMs };
}

async function main(): Promise<void> {
  const { port, stop } = await startPrivateRedis();
  try {
    const redis = new Redis({ port, host: '127.0.0.1' });
    const admin = new Redis({ port, host: '127.0.0.1' });
    const results = new Map<string, Try[]>();
    for (const v of VARIANTS) {
      await once(redis, admin, v); // warm-up
    }
    for (let t = 0; t < TRIES; t++) {
      for (const v of t % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const r = await once(redis, admin, v);
        results.set(v.name, [...(results.get(v.name) ?? []), r]);
        console.error(`try ${t + 1} ${v.name}: ${r.ms.toFixed(1)} ms, client ${r.clientMs.toFixed(1)} ms, redis ${r.redisMs.toFixed(1)} ms`);
      }
    }
    const min = (xs: number[]): number => Math.min(...xs);
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`\npush of ${N} indexes into an empty list, ${TRIES} tries alternated:`);
    console.log('| push | ms min | ms median | client CPU ms (median) | Redis CPU ms (median) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, rs] of results) {
      const cells = [min(rs.map((r) => r.ms)), med(rs.map((r) => r.ms)), med(rs.map((r) => r.clientMs)), med(rs.map((r) => r.redisMs))];
      console.log(`| ${name} | ${cells.map((c) => c.toFixed(1)).join(' | ')} |`);
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
