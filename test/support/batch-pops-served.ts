import { INestApplicationContext } from '@nestjs/common';
import { BATCH_POP_CONNECTION, RawBatchPop } from '../../src/queue-id/redis/raw-batch-pop';

/** The pops answered over an app's batch pop connection since `countBatchPops` (none when it has no such connection). */
export interface BatchPopCount {
  /** The app pops batches over its own connection (standalone Redis, no REDIS_WAIT_REPLICAS). */
  readonly enabled: boolean;
  readonly served: number;
}

/** Counts the pops of the app's batch pop connection (raw-batch-pop.ts) that resolved, from now on. */
export function countBatchPops(app: INestApplicationContext): BatchPopCount {
  const connection = app.get<RawBatchPop | null>(BATCH_POP_CONNECTION);
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
