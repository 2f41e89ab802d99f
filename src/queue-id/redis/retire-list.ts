import { RedisClient } from '../../infra/redis/redis.tokens';

/** Name of the Redis command (a Lua script, sent by EVALSHA) that retires one list. */
const RETIRE_LIST = 'shardleafRetireList';

/**
 * KEYS[1] a list, KEYS[2] its "pushed up to" marker, KEYS[3] its stored limit (same Cluster slot
 * by construction); ARGV[1] the shard's retired max_id. Deletes the list and the stored limit (a
 * re-created app may have another) and raises the marker to ARGV[1] (never lowers it), atomically:
 * a refill of the deleted app that allocated before the delete pushes a range ending at most at
 * ARGV[1], which the guarded push then refuses. Returns 1 when a list was deleted. Indexes are
 * below 2^49, exact as Lua numbers.
 */
export const RETIRE_LIST_LUA = `
local deleted = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[3])
local mark = tonumber(redis.call('GET', KEYS[2]) or '-1')
if mark == nil or mark < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], ARGV[1])
end
return deleted`;

interface RetireCommand {
  [RETIRE_LIST](list: string, mark: string, limit: string, maxId: string): Promise<number>;
}

/** Defines the retire command on the client (once per client). */
export function defineRetireList(redis: RedisClient): void {
  if (!(RETIRE_LIST in redis)) {
    redis.defineCommand(RETIRE_LIST, { numberOfKeys: 3, lua: RETIRE_LIST_LUA });
  }
}

/** One list retired (see RETIRE_LIST_LUA); 1 when the list existed. `defineRetireList` first. */
export function retireList(redis: RedisClient, listKey: string, markKey: string, limitKey: string, maxId: bigint): Promise<number> {
  return (redis as unknown as RetireCommand)[RETIRE_LIST](listKey, markKey, limitKey, maxId.toString());
}
