import { createHash } from 'node:crypto';
import type { RedisClient } from './redis.tokens';

/** A key or an argument of a script. */
export type ScriptArg = string | Buffer | number;

/** ioredis has the `…Buffer` variant of every command; its typings lack these two. */
interface BufferEval {
  evalshaBuffer(sha: string, numberOfKeys: number, ...args: ScriptArg[]): Promise<unknown>;
  evalBuffer(lua: string, numberOfKeys: number, ...args: ScriptArg[]): Promise<unknown>;
}

/**
 * A Lua script run by EVALSHA, and sent once as EVAL when the server answers NOSCRIPT (a restarted
 * or failed-over server that does not know it: it did not run, so sending it again runs it once).
 * Routed by its first key in a Cluster, as any keyed command; auto-pipelined like one.
 *
 * Not an ioredis custom command (defineCommand): ioredis copies every defined command into each
 * Pipeline it creates, and with auto-pipelining it creates one per event-loop turn, so the queue
 * single get paid for the nine scripts of this service on every turn: 0.35–0.86 µs of CPU per
 * request in profiles (docs/performance.md, "the single get's last trims").
 */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly lua: string,
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs it with its keys then its arguments; strings in the reply. */
  run(redis: RedisClient, ...keysAndArgs: ScriptArg[]): Promise<unknown> {
    return orOnNoScript(redis.evalsha(this.sha, this.numberOfKeys, ...keysAndArgs), () => redis.eval(this.lua, this.numberOfKeys, ...keysAndArgs));
  }

  /** Runs it with its keys then its arguments; Buffers in the reply. */
  runBuffer(redis: RedisClient, ...keysAndArgs: ScriptArg[]): Promise<unknown> {
    const client = redis as unknown as BufferEval;
    return orOnNoScript(client.evalshaBuffer(this.sha, this.numberOfKeys, ...keysAndArgs), () =>
      client.evalBuffer(this.lua, this.numberOfKeys, ...keysAndArgs),
    );
  }
}

/** `first`'s outcome, unless it failed with NOSCRIPT: then `again`'s (the script did not run). */
function orOnNoScript(first: Promise<unknown>, again: () => Promise<unknown>): Promise<unknown> {
  return first.catch((err: unknown) => {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
      return again();
    }
    throw err;
  });
}
