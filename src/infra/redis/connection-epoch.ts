import { Cluster } from 'ioredis';
import { RedisClient } from './redis.tokens';
import { forEachConnection } from './connection-events';

const CONNECTION_EVENTS = ['close', 'end', 'reconnecting', 'connect', 'ready'] as const;

/**
 * A counter that moves whenever a connection of the client closes, reconnects or is replaced
 * (any node of a Cluster). Equal values before and after a round trip mean both ends of it were
 * on the same connection. ioredis emits these events one tick after the change, and a new
 * connection always takes longer than that (retryStrategy waits ≥ 100 ms), so a reply from a new
 * connection is never seen before the counter moved.
 */
export class ConnectionEpoch {
  private count = 0;

  constructor(client: RedisClient) {
    const bump = (): void => {
      this.count++;
    };
    forEachConnection(client, (redis) => {
      for (const event of CONNECTION_EVENTS) {
        redis.on(event, bump);
      }
    });
    if (client instanceof Cluster) {
      for (const event of [...CONNECTION_EVENTS, '+node', '-node'] as const) {
        client.on(event, bump);
      }
    }
  }

  get value(): number {
    return this.count;
  }
}
