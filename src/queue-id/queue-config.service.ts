import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LockService } from '../infra/redis/lock.service';
import { deleteKeys } from '../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { AppRegistry } from './core/app-registry';
import { QueueKeys } from './core/queue-keys';
import { IdAllocRepository, RetiredShard } from './id-alloc.repository';

/** How often a request for an unknown app may trigger a reload. */
const MISS_RELOAD_INTERVAL_MS = 1000;

/** Name of the Redis command (a Lua script, sent by EVALSHA) that retires one list. */
const RETIRE_LIST = 'shardleafRetireList';

/**
 * KEYS[1] a list, KEYS[2] its "pushed up to" marker (same Cluster slot by construction);
 * ARGV[1] the shard's retired max_id. Deletes the list and raises the marker to ARGV[1] (never
 * lowers it), atomically: a refill of the deleted app that allocated before the delete pushes
 * a range ending at most at ARGV[1], which the guarded push then refuses. Returns 1 when a list
 * was deleted. Indexes are below 2^49, exact as Lua numbers.
 */
const RETIRE_LIST_LUA = `
local deleted = redis.call('DEL', KEYS[1])
local mark = tonumber(redis.call('GET', KEYS[2]) or '-1')
if mark == nil or mark < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], ARGV[1])
end
return deleted`;

interface RetireCommand {
  [RETIRE_LIST](list: string, mark: string, maxId: string): Promise<number>;
}

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
    if (!(RETIRE_LIST in redis)) {
      redis.defineCommand(RETIRE_LIST, { numberOfKeys: 2, lua: RETIRE_LIST_LUA });
    }
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
    const deleted = await this.retireLists(await this.repo.findRetiredWithoutRow());
    if (deleted > 0) {
      this.logger.log(`deleted ${deleted} Redis list(s) of apps deleted through the admin API`);
    }
    return deleted;
  }

  /**
   * The Redis step of a delete, per shard: DEL the list and raise its "pushed up to" marker to
   * the shard's retired max_id, in one script on the list's slot. Safe to repeat. Returns the
   * number of lists that existed.
   */
  async retireLists(shards: readonly RetiredShard[]): Promise<number> {
    const redis = this.redis as unknown as RetireCommand;
    let deleted = 0;
    // One app (64 shards) at a time in flight: bounded, and one slot per call on a Cluster.
    for (let i = 0; i < shards.length; i += 64) {
      const counts = await Promise.all(
        shards
          .slice(i, i + 64)
          .map((r) =>
            redis[RETIRE_LIST](this.keys.list(r.appId, r.shardId), this.keys.pushMark(r.appId, r.shardId), r.maxId.toString()),
          ),
      );
      deleted += counts.reduce((a, b) => a + Number(b), 0);
    }
    return deleted;
  }

  /** Deletes all 64 lists of one app (admin delete, or a lowered max_limit_id). */
  async deleteAppLists(appId: number, shardIds: Iterable<number>): Promise<number> {
    const keys = [...shardIds].map((s) => this.keys.list(appId, s));
    return deleteKeys(this.redis, keys);
  }
}
