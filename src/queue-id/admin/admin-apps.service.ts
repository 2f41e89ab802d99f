import { Inject, Injectable } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { QueueLists } from '../core/queue-lists';
import { RefillAhead } from '../core/refill-ahead';
import { JS_SAFE_MAX_INDEX, SHARD_COUNT, maxIndexFor } from '../core/queue-id-layout';
import { ShardCapacity, appCapacity, shardCapacity } from '../core/shard-capacity';
import { AppPatch, IdAllocRepository, IdAllocRow, NewApp } from '../id-alloc.repository';
import { AppRegistrySync } from '../app-registry-sync.service';
import { RefillStatus, ShardRefill } from '../refill/shard-refill';

export interface ShardView {
  shardId: number;
  maxId: string;
  step: number;
  /**
   * IDs this instance's last refill of the shard took: the step, or more while the shard is hot
   * (doubled when a refill lasted less than QUEUE_REFILL_TARGET_MS, up to QUEUE_REFILL_MAX_SIZE).
   * The list is refilled at or below QUEUE_IDLE_RATIO × this size.
   */
  refillSize: number;
  queueLength: number;
  /** Indexes not yet taken from the DB before the limit (or the 49-bit index range). */
  unallocated: string;
  /** IDs this shard can still hand out: queued + unallocated. */
  remainingCapacity: string;
  /** Whether every index allocated so far (max_id) is at most jsSafeMaxIndex: all IDs below 2^53. */
  jsSafe: boolean;
}

export interface AppSummary {
  appId: number;
  appName: string;
  description: string | null;
  step: number;
  maxLimitId: string;
  shardCount: number;
  queueLength: number;
  remainingCapacity: string;
  exhaustedShards: number;
  createTime: string;
  updateTime: string;
}

export interface AppDetail extends AppSummary {
  /**
   * The app's IDs stay below 2^53 (exact as a JavaScript number) up to this index on every shard
   * (2^39 - 1 = 549755813887, whatever the appId); a shard's IDs pass 2^53 once its max_id is above it.
   */
  jsSafeMaxIndex: string;
  shards: ShardView[];
}

/** `POST /admin/apps`: the app, and whether its shards resumed above a deleted app's indexes. */
export interface CreatedApp extends AppDetail {
  /**
   * Shards that started from a tombstone of an earlier delete of this appId (max_id = the
   * highest index the deleted app had allocated there) instead of 0. 0 for a new appId.
   */
  resumedShards: number;
}

export interface RemovedApp {
  appId: number;
  deletedRows: number;
  deletedLists: number;
  /** Highest index the deleted app ever allocated on any shard; a re-create resumes above it. */
  retiredMaxId: string;
}

/** What the admin use cases need of id_alloc. */
export type AppRows = Pick<
  IdAllocRepository,
  'findAll' | 'findApp' | 'createApp' | 'updateApp' | 'retireApp' | 'findRetired'
>;

/** The admin use cases over id_alloc and the queue's lists (QueueLists). */
@Injectable()
export class AdminAppsService {
  constructor(
    @Inject(IdAllocRepository) private readonly repo: AppRows,
    private readonly lists: QueueLists,
    private readonly queueConfig: AppRegistrySync,
    private readonly refills: ShardRefill,
    private readonly ahead: RefillAhead,
  ) {}

  /**
   * Creates the 64 shard rows; idempotent for the same settings, 409 for different ones. An appId
   * deleted before resumes on each shard above everything it ever allocated (id_alloc_retired),
   * so re-creating an app never reissues its IDs.
   */
  async create(app: NewApp): Promise<{ created: boolean; app: CreatedApp }> {
    const existing = await this.repo.findApp(app.appId);
    const conflict = existing.find(
      (r) =>
        r.appName !== app.appName ||
        r.step !== app.step ||
        r.maxLimitId !== app.maxLimitId ||
        (r.description ?? null) !== app.description,
    );
    if (conflict) {
      throw new IdGenError(
        ErrorKind.Conflict,
        `appId ${app.appId} already exists with other settings (appName '${conflict.appName}', step ${conflict.step}, ` +
          `maxLimitId ${conflict.maxLimitId}); use PATCH to change them`,
      );
    }
    if (existing.length === 0) {
      // A re-create: repeat the delete's Redis step first, in case it failed after its commit,
      // so the new app starts on empty lists with raised markers.
      await this.lists.retire(await this.repo.findRetired(app.appId));
    }
    const { rows, inserted, resumed } = await this.repo.createApp(app, SHARD_COUNT);
    await this.queueConfig.reload();
    return { created: inserted > 0, app: { ...(await this.detail(rows)), resumedShards: resumed.length } };
  }

  async list(): Promise<AppSummary[]> {
    const rows = await this.repo.findAll();
    const byApp = new Map<number, IdAllocRow[]>();
    for (const row of rows) {
      const list = byApp.get(row.appId) ?? [];
      list.push(row);
      byApp.set(row.appId, list);
    }
    const out: AppSummary[] = [];
    for (const appRows of byApp.values()) {
      const { shards: _shards, jsSafeMaxIndex: _jsSafeMaxIndex, ...summary } = await this.detail(appRows);
      out.push(summary);
    }
    return out;
  }

  async get(appId: number): Promise<AppDetail> {
    return this.detail(await this.requireApp(appId));
  }

  async update(appId: number, patch: AppPatch): Promise<AppDetail> {
    const before = await this.requireApp(appId);
    const rows = await this.repo.updateApp(appId, patch);
    const oldLimit = before[0].maxLimitId;
    const newLimit = patch.maxLimitId;
    if (newLimit !== undefined) {
      // Applied whenever the PATCH names a limit, not only when it changes: a PATCH repeated after
      // its Redis step failed (answered 503) finds the row already changed and must apply it still.
      // Lowered or set again: the limit is stored next to the lists, so that a refill allocated
      // before this change can neither claim nor push above it on any instance, and a list that may
      // hold indexes above it goes (a gap). Raised or removed: the stored limit goes.
      const raised = newLimit === 0n || (oldLimit !== 0n && newLimit > oldLimit);
      await this.lists.applyLimits(
        appId,
        rows.map((r) => ({ shardId: r.shardId, maxIndex: raised ? null : maxIndexFor(appId, r.shardId, newLimit) })),
      );
    }
    await this.queueConfig.reload();
    return this.detail(rows);
  }

  /**
   * Deletes the app: its rows go and each shard's max_id is kept as a tombstone (one DB
   * transaction), then each list is deleted and its "pushed up to" marker raised to the
   * tombstone, so a refill of the old app still in flight cannot push into a re-created app's
   * list. If the Redis step fails after the commit, the reload (or a resent DELETE) repeats it.
   */
  async remove(appId: number): Promise<RemovedApp> {
    const { deletedRows, retired } = await this.repo.retireApp(appId);
    if (deletedRows > 0) {
      // This instance stops serving the app at once, even if the Redis step below fails.
      await this.queueConfig.reload();
    }
    // Also on a resent DELETE (nothing left to delete): the first one's Redis step may have failed.
    const deletedLists = await this.lists.retire(retired);
    if (deletedRows === 0) {
      throw new IdGenError(
        ErrorKind.NotFound,
        retired.length > 0
          ? `appId ${appId} does not exist (it was deleted; POST /admin/apps re-creates it above its old IDs)`
          : `appId ${appId} does not exist`,
      );
    }
    const retiredMaxId = retired.reduce((max, r) => (r.maxId > max ? r.maxId : max), 0n);
    return { appId, deletedRows, deletedLists, retiredMaxId: retiredMaxId.toString() };
  }

  /** Pushes one more segment to every shard of the app, whatever its list length. */
  async refillApp(appId: number): Promise<{ appId: number } & Record<RefillStatus, number>> {
    const rows = await this.requireApp(appId);
    const counts: Record<RefillStatus, number> = { refilled: 0, sufficient: 0, busy: 0, exhausted: 0, missing: 0, refused: 0 };
    for (const row of rows) {
      const result = await this.refills
        .refill({ appId, shardId: row.shardId }, { skipIfAtLeast: Number.MAX_SAFE_INTEGER, minWanted: 1, lockRetries: 40 })
        .catch((err: unknown) => {
          // A shard refused for its push marker is counted; the others are still refilled.
          if (err instanceof IdGenError && err.kind === ErrorKind.QueueMarkerInvalid) {
            return { status: 'refused' as const };
          }
          throw err;
        });
      counts[result.status]++;
    }
    return { appId, ...counts };
  }

  private async requireApp(appId: number): Promise<IdAllocRow[]> {
    const rows = await this.repo.findApp(appId);
    if (rows.length === 0) {
      throw new IdGenError(ErrorKind.NotFound, `appId ${appId} does not exist`);
    }
    return rows;
  }

  private async detail(rows: IdAllocRow[]): Promise<AppDetail> {
    const lengths = await this.lists.lengths(rows);
    let queued = 0;
    const capacities: ShardCapacity[] = [];
    const shards = rows.map((r, i): ShardView => {
      const queueLength = Number(lengths[i]?.[1] ?? 0);
      const capacity = shardCapacity(r, queueLength);
      capacities.push(capacity);
      queued += queueLength;
      return {
        shardId: r.shardId,
        maxId: r.maxId.toString(),
        step: r.step,
        refillSize: this.ahead.currentSize(r.appId, r.shardId, r.step),
        queueLength,
        unallocated: capacity.unallocated.toString(),
        remainingCapacity: capacity.remaining.toString(),
        jsSafe: r.maxId <= JS_SAFE_MAX_INDEX,
      };
    });
    const { remaining, exhaustedShards } = appCapacity(capacities);
    const first = rows[0];
    return {
      appId: first.appId,
      appName: first.appName,
      description: first.description,
      step: first.step,
      maxLimitId: first.maxLimitId.toString(),
      shardCount: rows.length,
      queueLength: queued,
      remainingCapacity: remaining.toString(),
      exhaustedShards,
      createTime: first.createTime.toISOString(),
      updateTime: first.updateTime.toISOString(),
      jsSafeMaxIndex: JS_SAFE_MAX_INDEX.toString(),
      shards,
    };
  }
}
