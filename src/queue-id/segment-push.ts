import { createHash } from 'node:crypto';
import { RedisClient } from '../infra/redis/redis.tokens';

/**
 * The refill push as one idempotent Lua script: the indexes from..to are generated on the server
 * and pushed only if the list's "pushed up to" marker is below `from`, and the marker is set to
 * `to` in the same script. A push run twice (a client resend after a lost reply, a retry) therefore
 * pushes once; the second run is refused. The segments of one shard come from one id_alloc row
 * whose max_id only grows, so "marker >= from" means already pushed, or older than something
 * pushed: the refused segment becomes a gap, never a second copy.
 *
 * KEYS[1] the list, KEYS[2] its marker (same Cluster slot: QueueKeys.pushMark); ARGV from, to as
 * decimal strings. Indexes stay below 2^49, exact in Lua's doubles; '%d' formats them (tostring
 * would print 1e+14). RPUSH takes at most CHUNK arguments per call (Lua's unpack has a stack
 * limit). Returns {pushed, marker}; pushed = -1 when refused.
 */
export const PUSH_RANGE_LUA = `
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

const PUSH_RANGE_SHA = createHash('sha1').update(PUSH_RANGE_LUA).digest('hex');

/**
 * Most indexes one script run pushes: a script blocks the Redis server while it runs (every pop of
 * every instance waits behind it; 100,000 took 33–79 ms here), so a step is pushed in runs of
 * 10,000 (a few ms each) and pops go on between them. Each run is idempotent on its own.
 */
export const MAX_PER_RUN = 10_000n;

/** Largest index the script handles exactly (Lua numbers are doubles). */
const MAX_EXACT = 2n ** 53n - 1n;

export interface PushOutcome {
  /** Indexes pushed. */
  pushed: number;
  /** Set when a run was refused (the marker already at or past its first index): the rest is a gap. */
  refusedAt?: { from: bigint; mark: bigint };
}

/**
 * RPUSH of from..to to `listKey`, at most once (see PUSH_RANGE_LUA), in runs of MAX_PER_RUN.
 * Refused when the marker is already at or past `from` (then nothing is pushed).
 */
export async function pushRange(
  redis: RedisClient,
  listKey: string,
  markKey: string,
  from: bigint,
  to: bigint,
): Promise<PushOutcome> {
  let pushed = 0;
  for (let first = from; first <= to; first += MAX_PER_RUN) {
    const last = first + MAX_PER_RUN - 1n < to ? first + MAX_PER_RUN - 1n : to;
    const run = await pushRun(redis, listKey, markKey, first, last);
    if (run.refusedAt) {
      return { pushed, refusedAt: run.refusedAt };
    }
    pushed += run.pushed;
  }
  return { pushed };
}

/** One script run. EVALSHA, with EVAL when the server does not know the script (NOSCRIPT: it did not run). */
async function pushRun(
  redis: RedisClient,
  listKey: string,
  markKey: string,
  from: bigint,
  to: bigint,
): Promise<PushOutcome> {
  if (from < 0n || to < from || to > MAX_EXACT) {
    throw new RangeError(`cannot push ${from}..${to}`);
  }
  const args = [listKey, markKey, from.toString(), to.toString()];
  let reply: unknown;
  try {
    reply = await redis.evalsha(PUSH_RANGE_SHA, 2, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
      throw err;
    }
    reply = await redis.eval(PUSH_RANGE_LUA, 2, ...args);
  }
  const [pushed, mark] = reply as [number, string];
  return pushed < 0 ? { pushed: 0, refusedAt: { from, mark: BigInt(mark) } } : { pushed };
}
