import { Inject, Injectable, Logger } from '@nestjs/common';
import { REDIS_CONFIG } from '../config/config-tokens';
import { RedisConfig } from '../config/redis-config';
import { AppRegistry } from './core/app-registry';
import { maxIndexFor } from './core/queue-id-layout';
import { LengthReads } from './core/length-reads';
import { QueueLists } from './core/queue-lists';
import { IdAllocRepository } from './id-alloc.repository';
import { QueueLocks } from './queue-locks';

/** How often a request for an unknown app may trigger a reload. */
const MISS_RELOAD_INTERVAL_MS = 1000;

/**
 * Keeps the AppRegistry in step with `id_alloc` and lets one
 * instance at a time finish the Redis side of admin deletes. Lists are only ever deleted for
 * (app, shard) pairs this database's admin API retired (`id_alloc_retired`, no `id_alloc` row):
 * never lists it knows nothing about, which may belong to another deployment sharing the Redis
 * database and key prefix.
 */
@Injectable()
export class AppRegistrySync {
  private readonly logger = new Logger(AppRegistrySync.name);
  private inflight: Promise<void> | null = null;
  private lastMissReload = 0;

  constructor(
    @Inject(REDIS_CONFIG) private readonly redis: RedisConfig,
    private readonly lists: QueueLists,
    private readonly locks: QueueLocks,
    @Inject(IdAllocRepository) private readonly repo: Pick<IdAllocRepository, 'findShards' | 'findRetiredWithoutRow'>,
    private readonly registry: AppRegistry,
    /** The request path's length-read budgets (RequestPops.popOneIndex): void after a reload. */
    private readonly lengthReads: LengthReads = new LengthReads(),
  ) {}

  /** Re-reads id_alloc into the registry. Concurrent callers share one read. */
  reload(): Promise<void> {
    if (!this.inflight) {
      this.inflight = (async () => {
        try {
          this.registry.replace(await this.repo.findShards());
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

  /**
   * The scheduled reload: registry refresh, then (one instance, under a lock) list cleanup and
   * stored limits left behind by a raise.
   */
  async reloadAndCleanUp(): Promise<{ deletedLists: number; droppedLimits: number }> {
    await this.reload();
    const outcome = await this.locks.reload(async () => ({ deletedLists: await this.cleanUpRetiredLists(), droppedLimits: await this.dropStaleLimits() }));
    return outcome.acquired ? outcome.value : { deletedLists: 0, droppedLimits: 0 };
  }

  /**
   * Deletes every limit stored in Redis (QueueLists.applyLimits) below the one id_alloc has now:
   * left by a PATCH that raised the limit and whose Redis step failed, it would refuse every refill
   * above it until it expires. The stored limits are read first, id_alloc after: a limit stored
   * before that read came from a PATCH whose row update id_alloc already shows (or a later one's),
   * and one stored again since is left alone (QueueLists.dropStoredLimit; the command bound is the
   * margin for the way to Redis).
   */
  async dropStaleLimits(): Promise<number> {
    const shards = this.registry.all().flatMap((app) => [...app.shards.keys()].map((shardId) => ({ appId: app.appId, shardId })));
    const readAt = performance.now();
    const stored = await this.lists.storedLimits(shards);
    const candidates = shards.map((s, i) => ({ ...s, seen: stored[i] })).filter((s) => s.seen !== null);
    if (candidates.length === 0) {
      return 0;
    }
    const limits = new Map((await this.repo.findShards()).map((r) => [`${r.appId}/${r.shardId}`, r.maxLimitId]));
    let dropped = 0;
    for (const { appId, shardId, seen } of candidates) {
      const limit = limits.get(`${appId}/${shardId}`);
      const maxIndex = limit === undefined ? null : maxIndexFor(appId, shardId, limit);
      if (seen !== null && maxIndex !== null && seen.maxIndex < maxIndex && (await this.lists.dropStoredLimit(appId, shardId, seen, performance.now() - readAt + this.redis.commandTimeoutMs))) {
        dropped++;
        this.logger.warn(
          `app ${appId} shard ${shardId}: a stored limit (index ${seen.maxIndex}) below id_alloc's max_limit_id was deleted ` +
            '(a raise whose Redis step failed)',
        );
      }
    }
    return dropped;
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
