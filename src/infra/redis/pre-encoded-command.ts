import { Command } from 'ioredis';
import { RedisClient } from './redis.tokens';

/**
 * An ioredis command whose request bytes were written by the caller (queue-id/redis/resp/resp-encode.ts): ioredis
 * keeps `name` and the key (its Cluster slot, MOVED/ASK redirects, the offline queue, the reply
 * queue) and writes `bytes` instead of encoding the arguments itself. Only the key is passed as
 * an argument, so the client's per-argument work is done once, not once per index.
 *
 * It is sent like any command: at most once (no resend after a connection loss, see
 * unanswered-commands.ts; a Cluster redirect resends it only after a MOVED/ASK/TRYAGAIN reply,
 * which Redis gives without executing the command).
 */
class PreEncodedCommand extends Command {
  constructor(
    name: string,
    key: string,
    private readonly bytes: Buffer,
  ) {
    super(name, [key]);
  }

  override toWritable(): Buffer {
    return this.bytes;
  }
}

/** The command, to add to a pipeline or a transaction (MULTI) yourself. */
export function preEncodedCommand(name: string, key: string, bytes: Buffer): Command {
  return new PreEncodedCommand(name, key, bytes);
}

/**
 * Sends `bytes` (one whole RESP request of command `name` on `key`, key first) and resolves with
 * its reply. The caller guarantees the bytes are the request `name key …`: the key given here only
 * routes it.
 */
export function sendPreEncoded(redis: RedisClient, name: string, key: string, bytes: Buffer): Promise<unknown> {
  const command = new PreEncodedCommand(name, key, bytes);
  return redis.sendCommand(command) as Promise<unknown>;
}
