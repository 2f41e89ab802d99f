import { LuaScript } from '../../infra/redis/lua-script';
import { RedisClient } from '../../infra/redis/redis.tokens';

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

const RETIRE_LIST = new LuaScript(RETIRE_LIST_LUA, 3);

/** One list retired (see RETIRE_LIST_LUA); 1 when the list existed. */
export async function retireList(redis: RedisClient, listKey: string, markKey: string, limitKey: string, maxId: bigint): Promise<number> {
  return Number(await RETIRE_LIST.run(redis, listKey, markKey, limitKey, maxId.toString()));
}
