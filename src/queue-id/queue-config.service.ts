import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LockService } from '../infra/redis/lock.service';
import { AppRegistry } from './core/app-registry';
import { LengthReads } from './core/length-reads';
import { QueueKeys } from './core/queue-keys';
import { QueueLists } from './core/queue-lists';
import { IdAllocRepository } from './id-alloc.repository';

/** How often a request for an unknown app may trigger a reload. */
const MISS_RELOAD_INTERVAL_MS = 1000;

/**
 * Keeps the AppRegistry in step with `id_alloc` (seed 001's updateConfigFromDb) and lets one
 * instance at a time finish the Redis side of admin deletes. Lists are only ever deleted for
 * (app, shard) pairs this database's admin API retired (`id_alloc_retired`, no `id_alloc` row):
 * never lists it knows nothing about, which may belong to another deployment sharing the Redis
 * database and key prefix.
 */
@Injectable()
export class QueueConfigService {
  private readonly logger = new Logger(QueueConfigService.name);
  private inflight: Promise<void> | null = null;
  private lastMissReload = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lists: QueueLists,
    private readonly keys: QueueKeys,
    @Inject(LockService) private readonly locks: Pick<LockService, 'withLock'>,
    @Inject(IdAllocRepository) private readonly repo: Pick<IdAllocRepository, 'findAll' | 'findRetiredWithoutRow'>,
    private readonly registry: AppRegistry,
    /** The request path's length-read budgets (QueueRefillService.popAhead): void after a reload. */
    private readonly lengthReads: LengthReads = new LengthReads(),
  ) {}

  /** Re-reads id_alloc into the registry. Concurrent callers share one read. */
  reload(): Promise<void> {
    if (!this.inflight) {
      this.inflight = (async () => {
        try {
          this.registry.replace(await this.repo.findAll());
          // Lists may have been replaced meanwhile (an app deleted and re-created, a lowered limit).
          this.lengthReads.forgetAll();
        } finally {
          this.inflight = null;
        }
      })();
    }
    return this.inflight;
  }

  /**
   * A request named an app this instance does not know: it may have been created on another
   * instance since the last reload. Reload, at most once a second.
   */
  async reloadOnMiss(): Promise<void> {
    const now = Date.now();
    if (this.inflight) {
      await this.inflight;
      return;
    }
    if (now - this.lastMissReload < MISS_RELOAD_INTERVAL_MS) {
      return;
    }
    this.lastMissReload = now;
    await this.reload();
  }

  /** The scheduled reload: registry refresh, then (one instance, under a lock) list cleanup. */
  async reloadAndCleanUp(): Promise<{ deletedLists: number }> {
    await this.reload();
    const outcome = await this.locks.withLock(
      this.keys.reloadLock(),
      { ttlMs: this.config.queue.lockTtlMs, retryCount: 0 },
      () => this.cleanUpRetiredLists(),
    );
    return { deletedLists: outcome.acquired ? outcome.value : 0 };
  }

  /**
   * Repeats the Redis step of every admin delete (its own attempt may have failed after the
   * commit): for each retired (app, shard) without an id_alloc row, delete its list and raise
   * its marker to the tombstone. Nothing else is deleted: not on a cold start, not lists of apps
   * this database never had. Reads the tables afresh.
   */
  async cleanUpRetiredLists(): Promise<number> {
    // QueueLists.retire per shard: DEL the list and raise its "pushed up to" marker to the
    // shard's retired max_id, atomically. Safe to repeat.
    const deleted = await this.lists.retire(await this.repo.findRetiredWithoutRow());
    if (deleted > 0) {
      this.logger.log(`deleted ${deleted} Redis list(s) of apps deleted through the admin API`);
    }
    return deleted;
  }
}
