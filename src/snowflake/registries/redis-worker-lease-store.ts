import { RedisClient } from '../../infra/redis/redis.tokens';
import { ClaimRequest, LeaseClaim, LeaseHolder, WorkerLeaseStore } from '../core/worker-lease-store';

/**
 * The leases of one SNOWFLAKE_NAME in ONE Redis hash (so every script touches a single key, on a
 * Cluster too), fields per worker id i:
 * - `o:i` the holder's owner token, `e:i` its lease expiry by the Redis server's clock (TIME, ms),
 *   `a:i` the holder's ip:port;
 * - `t:i` the recorded time: an upper bound (the holders' clocks, ms) of every ID issued with i,
 *   kept after the lease ends;
 * - `since`: Redis time from which ids may be claimed. A claim that finds no hash (a Redis restarted
 *   empty or flushed: every lease and recorded time forgotten, while holders from before may still
 *   issue until their deadlines) creates it with `since` = now + TTL, and nobody claims before then.
 * Scripts read TIME before writing, which Redis ≥ 5 replicates as the script's effects.
 */
const NOW_MS = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;
const FMT = `local function fmt(n) return string.format('%.0f', n) end`;

/**
 * ARGV: owner, ttl, maxId, clientNow, allowance, identity → {1, id, floor} | {0} none free |
 * {2, minFloor} all ahead | {3, waitMs} leases lost or new: wait one TTL.
 */
const CLAIM = `${NOW_MS}${FMT}
local key = KEYS[1]
local ttl, maxId = tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('EXISTS', key) == 0 then
  redis.call('HSET', key, 'since', fmt(now + ttl))
  return {3, fmt(ttl)}
end
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

/** ARGV: id, owner, ttl, until → 1 renewed | 0 not the holder. */
const RENEW = `${NOW_MS}${FMT}
local key, i = KEYS[1], ARGV[1]
if redis.call('HGET', key, 'o:' .. i) ~= ARGV[2] then return 0 end
redis.call('HSET', key, 'e:' .. i, fmt(now + tonumber(ARGV[3])))
local recorded = tonumber(redis.call('HGET', key, 't:' .. i) or '0') or 0
if tonumber(ARGV[4]) > recorded then redis.call('HSET', key, 't:' .. i, ARGV[4]) end
return 1
`;

/** ARGV: id, owner, maxTimestamp → 1 released | 0 not the holder. */
const RELEASE = `
local key, i = KEYS[1], ARGV[1]
if redis.call('HGET', key, 'o:' .. i) ~= ARGV[2] then return 0 end
redis.call('HDEL', key, 'o:' .. i, 'e:' .. i, 'a:' .. i)
redis.call('HSET', key, 't:' .. i, ARGV[3])
return 1
`;

export class RedisWorkerLeaseStore implements WorkerLeaseStore {
  constructor(
    private readonly redis: RedisClient,
    /** The hash of this SNOWFLAKE_NAME: `{KEY_PREFIX}snowflake:{name}:leases`. */
    readonly key: string,
  ) {}

  get description(): string {
    return `hash ${this.key}`;
  }

  async claim(r: ClaimRequest): Promise<LeaseClaim> {
    const reply = (await this.redis.eval(
      CLAIM,
      1,
      this.key,
      r.owner,
      String(r.ttlMs),
      String(r.maxWorkerId),
      String(r.now),
      String(r.allowanceMs),
      r.identity,
    )) as Array<number | string>;
    switch (Number(reply[0])) {
      case 1:
        return { kind: 'claimed', workerId: Number(reply[1]), floor: Number(reply[2]) };
      case 2:
        return { kind: 'ahead', floor: Number(reply[1]) };
      case 3:
        return { kind: 'wait', waitMs: Number(reply[1]) };
      default:
        return { kind: 'none-free' };
    }
  }

  async renew(workerId: number, owner: string, ttlMs: number, until: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW, 1, this.key, String(workerId), owner, String(ttlMs), String(until))) === 1;
  }

  async release(workerId: number, owner: string, maxTimestamp: number): Promise<boolean> {
    return Number(await this.redis.eval(RELEASE, 1, this.key, String(workerId), owner, String(maxTimestamp))) === 1;
  }

  async holders(since: number): Promise<LeaseHolder[]> {
    const fields = await this.redis.hgetall(this.key);
    const holders: LeaseHolder[] = [];
    for (const [field, identity] of Object.entries(fields)) {
      const m = /^a:([0-9]+)$/.exec(field);
      const recordedUntil = m ? Number(fields[`t:${m[1]}`] ?? 0) : 0;
      if (m && recordedUntil >= since) {
        holders.push({ workerId: Number(m[1]), identity, recordedUntil });
      }
    }
    return holders;
  }

  async close(): Promise<void> {
    try {
      await Promise.race([this.redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } finally {
      this.redis.disconnect();
    }
  }
}
