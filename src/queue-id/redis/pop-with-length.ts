import { RedisClient } from '../../infra/redis/redis.tokens';

/**
 * The request path's pop when refill-ahead is on: LPOP with a count and the list's length after
 * it, in one script run (one round trip, atomic: the length is the one this pop left). KEYS[1]
 * the list; ARGV[1] the count. Returns {entries, length}. A read-only LLEN after a write in one
 * script: replicated as the LPOP's effect, like the plain LPOP.
 */
export const POP_WITH_LENGTH_LUA = `
local v = redis.call('LPOP', KEYS[1], ARGV[1])
if not v then v = {} end
return {v, redis.call('LLEN', KEYS[1])}
`;

/** Name of the script as an ioredis custom command (EVALSHA, EVAL once on NOSCRIPT: not run). */
const COMMAND = 'shardleafPopWithLength';

/** A client with the command defined; `…Buffer` keeps the entries as Buffers. */
type WithCommand = {
  shardleafPopWithLengthBuffer(listKey: string, n: number): Promise<[Buffer[] | null, number]>;
};

const defined = new WeakSet<object>();

/** Entries popped (Buffers: parseQueueEntry reads the digits) and the list's length after the pop. */
export interface Popped {
  entries: Buffer[];
  length: number;
}

/**
 * Defines the command on the client (once per client). Call it before the client sends anything
 * (RedisQueueLists does, in its constructor): with auto-pipelining, a pipeline being filled in the
 * turn the command is defined lacks it (ioredis copies the commands into a pipeline when it
 * creates it), and calling it there throws inside ioredis and leaves that pipeline's other
 * commands unanswered for ever.
 */
export function definePopWithLength(redis: RedisClient): void {
  if (!defined.has(redis)) {
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: POP_WITH_LENGTH_LUA });
    defined.add(redis);
  }
}

/**
 * Up to n entries and the length left, in one EVALSHA. Sent as an ioredis custom command
 * (defineCommand, once per client), which routes by its key in a Cluster, works with
 * auto-pipelining (a raw `callBuffer('EVALSHA', …)` does not there) and, on NOSCRIPT (a restarted or
 * failed-over server that does not know the script, so it did not run), sends it once as EVAL.
 */
export async function popWithLength(redis: RedisClient, listKey: string, n: number): Promise<Popped> {
  definePopWithLength(redis);
  const [entries, length] = await (redis as unknown as WithCommand).shardleafPopWithLengthBuffer(listKey, n);
  return { entries: entries ?? [], length: Number(length) };
}
