import type { Redis } from 'ioredis';
import { LuaScript } from '../../infra/redis/lua-script';
import { RedisClient } from '../../infra/redis/redis.tokens';
import { MARKER_INDEX_LUA } from '../core/push-marker';
import { StoredLimit } from '../core/queue-lists';

/**
 * How long a lowered limit is stored next to its list (QueueKeys.limitMark). It only has to outlive
 * the refills allocated before the lowering that may still claim or push (each of their calls is
 * bounded: seconds at most) and the other instances' next reload of id_alloc (QUEUE_RELOAD_CRON,
 * every 2 minutes by default); then it expires by itself, so a limit raised since (whose own Redis
 * step failed) cannot keep refusing refills for ever.
 */
export const LIMIT_TTL_MS = 10 * 60_000;

/**
 * KEYS[1] a list, KEYS[2] its stored limit, KEYS[3] its "pushed up to" marker (same Cluster slot
 * by construction); ARGV[1] the shard's new highest index, or '' when the limit was raised or
 * removed; ARGV[2] the TTL in ms. A limit: stored (for ARGV[2]), and the list deleted in the same
 * step when it may hold an index above the limit (its queued indexes are a gap), so every claim and
 * guarded push from then on sees the limit (segment-push.ts) and none before it left anything above
 * it in the list. The list may hold an index above it unless the limit was stored already (this is
 * a repeat: every push since was guarded) or the marker, the highest index that ever went through
 * the list, is at or below it. Safe to repeat. Raised or removed: deletes the stored limit, keeps
 * the list. Returns 1 when a list was deleted.
 */
export const APPLY_LIMIT_LUA = `${MARKER_INDEX_LUA}
if ARGV[1] == '' then
  redis.call('DEL', KEYS[2])
  return 0
end
local stored = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if stored == ARGV[1] then
  return 0
end
local raw = redis.call('GET', KEYS[3])
local mark = raw and markerIndex(raw)
if mark and mark <= tonumber(ARGV[1]) then
  return 0
end
return redis.call('DEL', KEYS[1])`;

/**
 * KEYS[1] a shard's stored limit. Returns {limit, ms left of its TTL} ({} when none is stored), read
 * together: a later store of the limit (a new PATCH) shows as more time left.
 */
export const READ_LIMIT_LUA = `
local limit = redis.call('GET', KEYS[1])
if not limit then
  return {}
end
return {limit, redis.call('PTTL', KEYS[1])}`;

/**
 * READ_LIMIT_LUA over every key of KEYS (one server: the keys of different lists are in different
 * Cluster slots): per key two entries, the limit ('' when none is stored) and the ms left of its TTL.
 */
export const READ_LIMITS_LUA = `
local out = {}
for i = 1, #KEYS do
  local limit = redis.call('GET', KEYS[i])
  if limit then
    out[2 * i - 1] = limit
    out[2 * i] = redis.call('PTTL', KEYS[i])
  else
    out[2 * i - 1] = ''
    out[2 * i] = -2
  end
end
return out`;

/**
 * KEYS[1] a shard's stored limit; ARGV[1] the limit and ARGV[2] the ms left as READ_LIMIT_LUA read
 * them, ARGV[3] how long ago that read was (a margin included), ARGV[4] the TTL a store gives.
 * Deletes it only if it is still that store: the same limit, no more time left than then, and
 * stored longer before the read than the read is ago. A store since the read is younger than the
 * read, so it has more time left than that one had: it is kept. Returns 1 when deleted.
 */
export const DROP_LIMIT_LUA = `
local left = redis.call('PTTL', KEYS[1])
if redis.call('GET', KEYS[1]) ~= ARGV[1] or left > tonumber(ARGV[2]) then
  return 0
end
if tonumber(ARGV[2]) >= 0 and tonumber(ARGV[4]) - tonumber(ARGV[2]) <= tonumber(ARGV[3]) then
  return 0
end
return redis.call('DEL', KEYS[1])`;

const APPLY_LIMIT = new LuaScript(APPLY_LIMIT_LUA, 3);
const READ_LIMIT = new LuaScript(READ_LIMIT_LUA, 1);
const DROP_LIMIT = new LuaScript(DROP_LIMIT_LUA, 1);

/** One shard's new limit (see APPLY_LIMIT_LUA): its highest index, or null for none. 1 when the list was deleted. */
export async function applyLimit(redis: RedisClient, listKey: string, limitKey: string, markKey: string, maxIndex: bigint | null): Promise<number> {
  return Number(await APPLY_LIMIT.run(
    redis,
    listKey,
    limitKey,
    markKey,
    maxIndex === null ? '' : maxIndex.toString(),
    String(LIMIT_TTL_MS),
  ));
}

/** One shard's stored limit, or null when none is stored. */
export async function readLimit(redis: RedisClient, limitKey: string): Promise<StoredLimit | null> {
  const reply = (await READ_LIMIT.run(redis, limitKey)) as [string, number] | [];
  return reply.length === 2 ? { maxIndex: BigInt(reply[0]), ttlLeftMs: Number(reply[1]) } : null;
}

/** The stored limits of many shards on one server, in order (READ_LIMITS_LUA: one command). */
export async function readLimits(redis: Redis, limitKeys: readonly string[]): Promise<Array<StoredLimit | null>> {
  const reply = (await redis.eval(READ_LIMITS_LUA, limitKeys.length, ...limitKeys)) as Array<string | number>;
  return limitKeys.map((_, i) => {
    const limit = reply[2 * i];
    return typeof limit === 'string' && limit !== '' ? { maxIndex: BigInt(limit), ttlLeftMs: Number(reply[2 * i + 1]) } : null;
  });
}

/**
 * Deletes a stored limit read `readAgoMs` ago (a margin for the way there included), unless stored
 * again since (DROP_LIMIT_LUA). 1 when deleted.
 */
export async function dropLimit(redis: RedisClient, limitKey: string, seen: StoredLimit, readAgoMs: number): Promise<number> {
  return Number(await DROP_LIMIT.run(
    redis,
    limitKey,
    seen.maxIndex.toString(),
    String(seen.ttlLeftMs),
    String(Math.ceil(readAgoMs)),
    String(LIMIT_TTL_MS),
  ));
}
