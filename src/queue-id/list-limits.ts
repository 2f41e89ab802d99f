import { RedisClient } from '../infra/redis/redis.tokens';

/** Name of the Redis command (a Lua script, sent by EVALSHA) that applies one shard's new limit. */
const APPLY_LIMIT = 'shardleafApplyLimit';

/**
 * How long a lowered limit is stored next to its list (QueueKeys.limitMark). It only has to outlive
 * the refills allocated before the lowering that may still claim or push (each of their calls is
 * bounded: seconds at most) and the other instances' next reload of id_alloc (QUEUE_RELOAD_CRON,
 * every 2 minutes by default); then it expires by itself, so a limit raised since (whose own Redis
 * step failed) cannot keep refusing refills for ever.
 */
export const LIMIT_TTL_MS = 10 * 60_000;

/**
 * KEYS[1] a list, KEYS[2] its stored limit (same Cluster slot by construction); ARGV[1] the shard's
 * new highest index, or '' when the limit was raised or removed; ARGV[2] the TTL in ms. Lowered:
 * stores the limit and deletes the list (its queued indexes may be above it: a gap) in one step, so
 * every claim and guarded push from then on sees the limit (segment-push.ts), and none before it
 * left anything above it in the list. Raised or removed: deletes the stored limit, keeps the list.
 * Returns 1 when a list was deleted.
 */
export const APPLY_LIMIT_LUA = `
if ARGV[1] == '' then
  redis.call('DEL', KEYS[2])
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return redis.call('DEL', KEYS[1])`;

interface ApplyLimitCommand {
  [APPLY_LIMIT](list: string, limit: string, maxIndex: string, ttlMs: string): Promise<number>;
}

/** Defines the command on the client (once per client). */
export function defineApplyLimit(redis: RedisClient): void {
  if (!(APPLY_LIMIT in redis)) {
    redis.defineCommand(APPLY_LIMIT, { numberOfKeys: 2, lua: APPLY_LIMIT_LUA });
  }
}

/** One shard's new limit (see APPLY_LIMIT_LUA): its highest index, or null for none. 1 when the list was deleted. */
export function applyLimit(redis: RedisClient, listKey: string, limitKey: string, maxIndex: bigint | null): Promise<number> {
  return (redis as unknown as ApplyLimitCommand)[APPLY_LIMIT](
    listKey,
    limitKey,
    maxIndex === null ? '' : maxIndex.toString(),
    String(LIMIT_TTL_MS),
  );
}
