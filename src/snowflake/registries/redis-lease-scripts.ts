import { LuaScript } from '../../infra/redis/lua-script';
import { RedisClient } from '../../infra/redis/redis.tokens';

/**
 * The Lua scripts of the redis registry's lease hash (one hash per SNOWFLAKE_NAME, so every script
 * touches a single key, on a Cluster too). Fields per worker id i:
 * - `o:i` the holder's owner token, `e:i` its lease expiry by the Redis server's clock (TIME, ms),
 *   `a:i` the holder's ip:port;
 * - `t:i` the recorded time: an upper bound (the holders' clocks, ms) of every ID issued with i,
 *   kept after the lease ends.
 * And for the hash:
 * - `run`: the run_id of the Redis server process that last wrote it;
 * - `since`: Redis time from which ids may be claimed.
 *
 * Epochs. A hash found with another `run` (or none) was not written by this server process: Redis
 * restarted (from a snapshot or an AOF, or empty), was restored from a backup, failed over to a
 * replica, or the slot moved to another node. Its content may be older than what holders were
 * told: a lease granted or renewed after the copy was made is missing, and a lease that had
 * expired and been claimed by another instance may show its earlier holder again. So the first
 * claim or renewal that finds it starts a new epoch: it forgets every lease that has expired by
 * now (plus `skew`, how far the clock of a server taking over may be behind the previous one's),
 * records the new run_id, and sets `since` to now + the epoch wait (the TTL plus how far the
 * instances' clocks may differ). No id is claimed before `since`: by then every holder told "held"
 * by the old server has passed its deadline (ttl - margin from before it sent its last claim or
 * renewal, and that was before this server took over), so its IDs are older than any new
 * holder's, whose recorded time `t:i` may be stale. Leases that had not expired stay with their
 * holders, whose renewals go on (nobody else can have claimed those ids in the lost history: they
 * were not expired there either).
 *
 * Scripts read TIME and INFO before writing, which Redis ≥ 5 replicates as the script's effects.
 */
const PRELUDE = `
local key = KEYS[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local function fmt(n) return string.format('%.0f', n) end
local function epoch(wait, skew)
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
  if redis.call('HGET', key, 'run') == run then return end
  local fields = redis.call('HGETALL', key)
  for j = 1, #fields, 2 do
    local i = string.match(fields[j], '^e:(%d+)$')
    if i and (tonumber(fields[j + 1]) or 0) <= now + skew then
      redis.call('HDEL', key, 'o:' .. i, 'e:' .. i, 'a:' .. i)
    end
  end
  local since = math.max(tonumber(redis.call('HGET', key, 'since') or '0') or 0, now + wait)
  redis.call('HSET', key, 'run', run, 'since', fmt(since))
end
`;

/**
 * ARGV: owner, ttl, maxId, clientNow, allowance, identity, skew, epochWait → {1, id, floor} | {0} none free |
 * {2, minFloor} all ahead | {3, waitMs} a new epoch (or a new hash): wait until `since`.
 */
const CLAIM = `${PRELUDE}
local ttl, maxId = tonumber(ARGV[2]), tonumber(ARGV[3])
epoch(tonumber(ARGV[8]), tonumber(ARGV[7]))
local since = tonumber(redis.call('HGET', key, 'since') or '0') or 0
if now < since then return {3, fmt(since - now)} end
local limit = tonumber(ARGV[4]) + tonumber(ARGV[5])
local minAhead = nil
for i = 0, maxId do
  local f = redis.call('HMGET', key, 'e:' .. i, 't:' .. i)
  if (tonumber(f[1] or '0') or 0) <= now then
    local floor = tonumber(f[2] or '0') or 0
    if floor <= limit then
      redis.call('HSET', key, 'o:' .. i, ARGV[1], 'e:' .. i, fmt(now + ttl), 'a:' .. i, ARGV[6])
      return {1, i, fmt(floor)}
    end
    if minAhead == nil or floor < minAhead then minAhead = floor end
  end
end
if minAhead == nil then return {0} end
return {2, fmt(minAhead)}
`;

/** ARGV: id, owner, ttl, until, skew, epochWait → 1 renewed | 0 not the holder (claimed by another, or forgotten by a new epoch). */
const RENEW = `${PRELUDE}
local i = ARGV[1]
epoch(tonumber(ARGV[6]), tonumber(ARGV[5]))
if redis.call('HGET', key, 'o:' .. i) ~= ARGV[2] then return 0 end
redis.call('HSET', key, 'e:' .. i, fmt(now + tonumber(ARGV[3])))
local recorded = tonumber(redis.call('HGET', key, 't:' .. i) or '0') or 0
if tonumber(ARGV[4]) > recorded then redis.call('HSET', key, 't:' .. i, ARGV[4]) end
return 1
`;

/**
 * ARGV: id, owner, maxTimestamp → 1 released | 0 not the holder. In a hash of another server
 * process (a new epoch not started yet) it changes nothing: the lease lapses, the epoch starts
 * with the next claim or renewal.
 */
const RELEASE = `
local key, i = KEYS[1], ARGV[1]
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
if redis.call('HGET', key, 'run') ~= run then return 0 end
if redis.call('HGET', key, 'o:' .. i) ~= ARGV[2] then return 0 end
redis.call('HDEL', key, 'o:' .. i, 'e:' .. i, 'a:' .. i)
redis.call('HSET', key, 't:' .. i, ARGV[3])
return 1
`;

const SCRIPTS = {
  shardleafLeaseClaim: new LuaScript(CLAIM, 1),
  shardleafLeaseRenew: new LuaScript(RENEW, 1),
  shardleafLeaseRelease: new LuaScript(RELEASE, 1),
} as const;

export type LeaseCommand = keyof typeof SCRIPTS;

/** Runs one lease script on `key` (EVALSHA; EVAL once on NOSCRIPT, which means it did not run: infra/redis/lua-script.ts). */
export function runLeaseCommand(redis: RedisClient, command: LeaseCommand, key: string, args: string[]): Promise<unknown> {
  return SCRIPTS[command].run(redis, key, ...args);
}
