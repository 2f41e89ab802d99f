import { RedisClient } from './redis.tokens';
import { forEachConnection } from './connection-events';

/**
 * The error of a command whose connection closed before its reply came. Deliberately not ioredis's
 * "Connection is closed." (a Cluster retries that one on another node).
 */
export const UNANSWERED_MESSAGE = 'the Redis connection closed before the reply: the command may or may not have run';

/**
 * Every command sent but unanswered when a connection closes fails at once with UNANSWERED_MESSAGE.
 * With `autoResendUnfulfilledCommands: false` ioredis forgets such commands on reconnect without
 * settling them (their promises would hang for ever); with `true` it would send them again, and a
 * write Redis had already executed (RPUSH, LPOP, WAIT on a new server) would run twice. A command
 * that failed this way is never sent again: the caller decides (a refill becomes a gap).
 */
export function rejectUnansweredOnClose(client: RedisClient): void {
  forEachConnection(client, (redis) => {
    // Before 'ready' only ioredis's own handshake (AUTH, SELECT, the ready check's INFO) is on the
    // wire, and our commands wait in the offline queue: rejecting the handshake would make ioredis
    // flush that queue ("Ready check failed"). So only a connection that was ready is swept.
    let ready = redis.status === 'ready';
    redis.on('ready', () => {
      ready = true;
    });
    redis.on('close', () => {
      if (!ready) {
        return;
      }
      ready = false;
      for (let item = redis.commandQueue.shift(); item; item = redis.commandQueue.shift()) {
        item.command.reject(new Error(UNANSWERED_MESSAGE));
      }
    });
  });
}
