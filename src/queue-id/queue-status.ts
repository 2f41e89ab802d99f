import { Inject, Injectable } from '@nestjs/common';
import { AppRegistry } from './core/app-registry';
import { POP_CONNECTION, PopConnection } from './redis/pop-connection';

/** What other modules may read of the queue generator's state (readiness). */
@Injectable()
export class QueueStatus {
  constructor(
    private readonly registry: AppRegistry,
    @Inject(POP_CONNECTION) private readonly popConnection: PopConnection | null,
  ) {}

  /** Whether the queue generator can issue IDs: id_alloc has been read into the registry once. */
  get ready(): boolean {
    return this.registry.isLoaded;
  }

  /**
   * Whether the queue's own Redis connection answers (a standalone Redis: single gets and batches
   * pop there, not through the ioredis client the Redis probe pings): a PING on it, connecting it
   * when it has none. Resolves at once when the queue pops through ioredis (Sentinel, Cluster,
   * REDIS_WAIT_REPLICAS). Rejects as a pop would fail.
   */
  pingPopConnection(): Promise<void> {
    return this.popConnection === null ? Promise.resolve() : this.popConnection.ping();
  }
}
