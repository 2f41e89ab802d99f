import { LuaScript } from '../../../src/infra/redis/lua-script';
import { RedisClient } from '../../../src/infra/redis/redis.tokens';

/**
 * The single get's reading pop until 2026-11-27, kept for the bench's comparisons
 * (pop-cost.ts, batch-cost.ts): LPOP with a count and the list's length after it, in one
 * script run (one round trip, atomic: the length is the one this pop left). KEYS[1]
 * the list; ARGV[1] the count. Returns {entries, length}. A read-only LLEN after a write in one
 * script: replicated as the LPOP's effect, like the plain LPOP.
 */
export const POP_WITH_LENGTH_LUA = `
local v = redis.call('LPOP', KEYS[1], ARGV[1])
if not v then v = {} end
return {v, redis.call('LLEN', KEYS[1])}
`;

const POP_WITH_LENGTH = new LuaScript(POP_WITH_LENGTH_LUA, 1);

/** Entries popped (Buffers: parseQueueEntry reads the digits) and the list's length after the pop. */
export interface Popped {
  entries: Buffer[];
  length: number;
}

/** Up to n entries and the length left, in one EVALSHA (infra/redis/lua-script.ts: EVAL once on NOSCRIPT). */
export async function popWithLength(redis: RedisClient, listKey: string, n: number): Promise<Popped> {
  const [entries, length] = (await POP_WITH_LENGTH.runBuffer(redis, listKey, n)) as [Buffer[] | null, number];
  return { entries: entries ?? [], length: Number(length) };
}
