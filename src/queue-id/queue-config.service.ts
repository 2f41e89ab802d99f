import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LockService } from '../infra/redis/lock.service';
import { deleteKeys, scanKeys } from '../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { AppRegistry } from './core/app-registry';
import { QueueKeys } from './core/queue-keys';
import { IdAllocRepository } from './id-alloc.repository';

/** How often a request for an unknown app may trigger a reload. */
const MISS_RELOAD_INTERVAL_MS = 1000;

/**
 * Keeps the AppRegistry in step with `id_alloc` (seed 001's updateConfigFromDb) and lets one
 * instance at a time delete the Redis lists of apps or shards no longer in the table.
 */
@Injectable()
export class QueueConfigService {
  private readonly logger = new Logger(QueueConfigService.name);
  private readonly keys: QueueKeys;
  private inflight: Promise<void> | null = null;
  private lastMissReload = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly locks: LockService,
    private readonly repo: IdAllocRepository,
    private readonly registry: AppRegistry,
  ) {
    this.keys = new QueueKeys(config.redis.keyPrefix);
  }

  /** Re-reads id_alloc into the registry. Concurrent callers share one read. */
  reload(): Promise<void> {
    if (!this.inflight) {
      this.inflight = (async () => {
        try {
          this.registry.replace(await this.repo.findAll());
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
      () => this.deleteOrphanLists(),
    );
    return { deletedLists: outcome.acquired ? outcome.value : 0 };
  }

  /** Deletes lists whose (app, shard) has no id_alloc row. Reads the table afresh. */
  async deleteOrphanLists(): Promise<number> {
    const rows = await this.repo.findAll();
    const live = new Set(rows.map((r) => `${r.appId}_${r.shardId}`));
    // On a Cluster the SCAN visits every master; the DELs go key by key (one slot each).
    const orphans = (await scanKeys(this.redis, this.keys.listPattern())).filter((key) => {
      const parsed = this.keys.parseList(key);
      return parsed !== null && !live.has(`${parsed.appId}_${parsed.shardId}`);
    });
    const deleted = await deleteKeys(this.redis, orphans);
    if (deleted > 0) {
      this.logger.log(`deleted ${deleted} Redis list(s) of apps no longer in id_alloc`);
    }
    return deleted;
  }

  /** Deletes all 64 lists of one app (admin delete, or a lowered max_limit_id). */
  async deleteAppLists(appId: number, shardIds: Iterable<number>): Promise<number> {
    const keys = [...shardIds].map((s) => this.keys.list(appId, s));
    return deleteKeys(this.redis, keys);
  }
}
