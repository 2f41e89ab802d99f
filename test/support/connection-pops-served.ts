import { INestApplicationContext } from '@nestjs/common';
import { POP_CONNECTION, PopConnection } from '../../src/queue-id/redis/pop-connection';

/** The pops answered over an app's pop connection since `countConnectionPops` (none when it has no such connection). */
export interface ConnectionPopCount {
  /** The app pops batches over its own connection (standalone Redis, no REDIS_WAIT_REPLICAS). */
  readonly enabled: boolean;
  readonly served: number;
}

/** Counts the pops of the app's pop connection (pop-connection.ts) that resolved, from now on. */
export function countConnectionPops(app: INestApplicationContext): ConnectionPopCount {
  const connection = app.get<PopConnection | null>(POP_CONNECTION);
  const count = { enabled: connection !== null, served: 0 };
  if (connection) {
    // Every pop goes through popWith (pop builds the request, the single get gives it built).
    const pop = connection.popWith.bind(connection);
    jest.spyOn(connection, 'popWith').mockImplementation(async (...args) => {
      const popped = await pop(...args);
      count.served++;
      return popped;
    });
  }
  return count;
}
