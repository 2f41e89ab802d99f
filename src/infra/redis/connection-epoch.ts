import { Cluster } from 'ioredis';
import { RedisClient } from './redis.tokens';
import { forEachConnection } from './connection-events';

/** Every connection loss emits one of these (a Cluster node that is dropped ends). */
const LOSS_EVENTS = ['close', 'end'] as const;

/**
 * A counter that moves whenever a connection of the client is lost (any node of a Cluster).
 * Equal values before a round trip was sent and after its reply came mean both ends of it were
 * on one connection: commands written to a connection are answered on it or fail with it, and
 * commands queued while the client reconnects go out together on the next one. ioredis emits
 * 'close' one tick after the loss, and a new connection always takes longer than that
 * (retryStrategy waits ≥ 100 ms), so no reply from a new connection comes before the counter
 * moved. Reconnects and new nodes do not move it: a round trip sent after them is on one
 * connection.
 */
export class ConnectionEpoch {
  private count = 0;

  constructor(client: RedisClient) {
    const bump = (): void => {
      this.count++;
    };
    forEachConnection(client, (redis) => {
      for (const event of LOSS_EVENTS) {
        redis.on(event, bump);
      }
    });
    if (client instanceof Cluster) {
      for (const event of [...LOSS_EVENTS, '-node'] as const) {
        client.on(event, bump);
      }
    }
  }

  get value(): number {
    return this.count;
  }
}
