import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { ER_LOCK_DEADLOCK, ER_NO_SUCH_TABLE, errnoOf } from '../infra/database/mysql-errors';
import { setClause } from '../infra/database/set-clause';
import { IdAllocEntity } from './id-alloc.entity';
import { AllocationResult, IdAllocNext } from './id-alloc-next';

export type { AllocationResult } from './id-alloc-next';

export interface IdAllocRow {
  appId: number;
  appName: string;
  shardId: number;
  maxId: bigint;
  step: number;
  description: string | null;
  maxLimitId: bigint;
  createTime: Date;
  updateTime: Date;
}

/** What the registry needs of an id_alloc row. */
export interface ShardRow {
  appId: number;
  appName: string;
  shardId: number;
  step: number;
  maxLimitId: bigint;
}

/** Attempts of an admin transaction that InnoDB chose as a deadlock victim (a rolled-back try changed nothing). */
const DEADLOCK_ATTEMPTS = 5;

export interface NewApp {
  appId: number;
  appName: string;
  step: number;
  maxLimitId: bigint;
  description: string | null;
}

/** A shard of a deleted app and the highest index ever allocated to it (`id_alloc_retired`). */
export interface RetiredShard {
  appId: number;
  shardId: number;
  maxId: bigint;
}

export interface AppPatch {
  appName?: string;
  step?: number;
  maxLimitId?: bigint;
  description?: string | null;
}

/** Narrow data access to `id_alloc`; every BIGINT converted with BigInt(), never Number(). */
@Injectable()
export class IdAllocRepository {
  private readonly logger = new Logger(IdAllocRepository.name);
  private readonly next: IdAllocNext;

  constructor(private readonly dataSource: DataSource) {
    this.next = new IdAllocNext(dataSource);
  }

  async findAll(): Promise<IdAllocRow[]> {
    const rows = await this.dataSource.getRepository(IdAllocEntity).find({ order: { appId: 'ASC', shardId: 'ASC' } });
    return rows.map(toRow);
  }

  /**
   * Every shard with what the registry keeps of it, in (app, shard) order: one plain SELECT of five
   * columns, no entities (16,384 rows at 256 apps: hydrating them was most of the start-up's garbage).
   */
  async findShards(): Promise<ShardRow[]> {
    const rows: Array<{ app_id: number | string; app_name: string; shard_id: number | string; step: number | string; max_limit_id: string }> =
      await this.dataSource.query(
        'SELECT app_id, app_name, shard_id, step, CAST(max_limit_id AS CHAR) AS max_limit_id FROM id_alloc ORDER BY app_id, shard_id',
      );
    return rows.map((r) => ({
      appId: Number(r.app_id),
      appName: r.app_name,
      shardId: Number(r.shard_id),
      step: Number(r.step),
      maxLimitId: BigInt(r.max_limit_id),
    }));
  }

  async findApp(appId: number): Promise<IdAllocRow[]> {
    const rows = await this.dataSource
      .getRepository(IdAllocEntity)
      .find({ where: { appId }, order: { shardId: 'ASC' } });
    return rows.map(toRow);
  }

  /** The next segment of a shard (IdAllocNext: one CALL, or the same transaction statement by statement). */
  allocate(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    return this.next.allocate(appId, shardId, minWanted);
  }

  /**
   * Moves a shard's max_id forward to `index` when it is below (never back): the next segment
   * starts above `index`. For a list whose "pushed up to" marker is above every segment this row
   * would hand out (a database restored from an older backup, a second deployment on the same key
   * prefix): without it every refill of that shard is refused, one step at a time, for ever.
   * Returns whether the row moved.
   */
  async advancePast(appId: number, shardId: number, index: bigint): Promise<boolean> {
    const result: { affectedRows: number } = await this.dataSource.query(
      'UPDATE id_alloc SET max_id = ? WHERE app_id = ? AND shard_id = ? AND max_id < ?',
      [index.toString(), appId, shardId, index.toString()],
    );
    return Number(result.affectedRows) > 0;
  }

  /**
   * Inserts the app's missing shard rows (max_id 0, so the first index is
   * 1), except that a shard retired by an earlier delete starts at its retired max_id: a
   * re-created app resumes above every index it ever allocated. One transaction that first locks
   * the app's id_alloc rows (or, when there are none, the gap where they would go) and then reads
   * the tombstones with a locking read: a concurrent delete either committed before (its tombstone
   * is read) or waits for this insert. Returns the rows as they stand afterwards, how many were
   * inserted and the tombstones the new rows started from.
   */
  async createApp(
    app: NewApp,
    shardCount: number,
  ): Promise<{ rows: IdAllocRow[]; inserted: number; resumed: RetiredShard[] }> {
    return this.adminTransaction('create the app', async (em) => {
      await em.query('SELECT shard_id FROM id_alloc WHERE app_id = ? FOR UPDATE', [app.appId]);
      const retired = await this.retiredIn(em, app.appId, true);
      const startAt = new Map(retired.map((r) => [r.shardId, r.maxId]));
      const values: unknown[] = [];
      const tuples: string[] = [];
      for (let shard = 0; shard < shardCount; shard++) {
        tuples.push('(?, ?, ?, ?, ?, ?, ?)');
        values.push(
          app.appId,
          app.appName,
          (startAt.get(shard) ?? 0n).toString(),
          shard,
          app.step,
          app.description,
          app.maxLimitId.toString(),
        );
      }
      const result: { affectedRows: number } = await em.query(
        `INSERT IGNORE INTO id_alloc (app_id, app_name, max_id, shard_id, step, description, max_limit_id) VALUES ${tuples.join(', ')}`,
        values,
      );
      const rows = await this.findAppIn(em, app.appId);
      return { rows, inserted: Number(result.affectedRows), resumed: retired.filter((r) => r.maxId > 0n) };
    });
  }

  async updateApp(appId: number, patch: AppPatch): Promise<IdAllocRow[]> {
    const set = setClause({
      app_name: patch.appName,
      step: patch.step,
      max_limit_id: patch.maxLimitId?.toString(),
      description: patch.description,
    });
    if (set.sql !== '') {
      await this.dataSource.query(`UPDATE id_alloc SET ${set.sql} WHERE app_id = ?`, [...set.values, appId]);
    }
    return this.findApp(appId);
  }

  /**
   * Deletes the app's rows and records each shard's max_id in `id_alloc_retired` (never lowering
   * an earlier tombstone), in one transaction that locks the rows first. A refill's allocation
   * (same row lock) either committed before, so its range is at most the tombstone, or runs
   * after and finds no row. Safe to repeat: a second call deletes nothing. Returns the rows
   * deleted and the app's tombstones as they stand afterwards (also when nothing was deleted).
   */
  async retireApp(appId: number): Promise<{ deletedRows: number; retired: RetiredShard[] }> {
    return this.adminTransaction('delete the app', async (em) => {
      const live: Array<{ shard_id: number | string; max_id: string }> = await em.query(
        'SELECT shard_id, max_id FROM id_alloc WHERE app_id = ? FOR UPDATE',
        [appId],
      );
      let deletedRows = 0;
      if (live.length > 0) {
        const values: unknown[] = [];
        for (const row of live) {
          values.push(appId, Number(row.shard_id), String(row.max_id));
        }
        await em.query(
          `INSERT INTO id_alloc_retired (app_id, shard_id, max_id, deleted_at) VALUES ${live.map(() => '(?, ?, ?, NOW())').join(', ')}
           ON DUPLICATE KEY UPDATE max_id = GREATEST(max_id, VALUES(max_id)), deleted_at = VALUES(deleted_at)`,
          values,
        );
        const result: { affectedRows: number } = await em.query('DELETE FROM id_alloc WHERE app_id = ?', [appId]);
        deletedRows = Number(result.affectedRows);
      }
      return { deletedRows, retired: await this.retiredIn(em, appId, false) };
    });
  }

  /** The app's tombstones (empty for an app never deleted). */
  async findRetired(appId: number): Promise<RetiredShard[]> {
    try {
      return await this.retiredIn(this.dataSource.manager, appId, false);
    } catch (err) {
      throw isMissingRetiredTable(err) ? retiredTableMissing(`read the tombstones of app ${appId}`) : err;
    }
  }

  /**
   * Tombstones of (app, shard) pairs that have no id_alloc row: the shards of apps this
   * database's admin API deleted and did not re-create. One statement, one snapshot.
   */
  async findRetiredWithoutRow(): Promise<RetiredShard[]> {
    let rows: Array<{ app_id: number | string; shard_id: number | string; max_id: string }>;
    try {
      rows = await this.dataSource.query(
        `SELECT r.app_id, r.shard_id, r.max_id FROM id_alloc_retired r
         LEFT JOIN id_alloc a ON a.app_id = r.app_id AND a.shard_id = r.shard_id
         WHERE a.app_id IS NULL ORDER BY r.app_id, r.shard_id`,
      );
    } catch (err) {
      if (!isMissingRetiredTable(err)) {
        throw err;
      }
      // Migrations not run: nothing is known to be retired, so nothing is cleaned up.
      this.logger.warn('table id_alloc_retired is missing (migrations not run?): no Redis list is cleaned up');
      return [];
    }
    return rows.map(toRetired);
  }

  private async retiredIn(em: EntityManager, appId: number, lock: boolean): Promise<RetiredShard[]> {
    const rows: Array<{ app_id: number | string; shard_id: number | string; max_id: string }> = await em.query(
      `SELECT app_id, shard_id, max_id FROM id_alloc_retired WHERE app_id = ? ORDER BY shard_id${lock ? ' FOR UPDATE' : ''}`,
      [appId],
    );
    return rows.map(toRetired);
  }

  /**
   * A REPEATABLE READ transaction of the admin API, redone when InnoDB rolled it back as a
   * deadlock victim (two creates of the same new app both hold the gap lock they insert into).
   * A missing id_alloc_retired table (migrations not run) refuses the change with a clear error:
   * without its tombstone a deleted app would restart at index 1.
   */
  private async adminTransaction<T>(what: string, work: (em: EntityManager) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.transaction('REPEATABLE READ', work);
      } catch (err) {
        if (errnoOf(err) === ER_LOCK_DEADLOCK && attempt < DEADLOCK_ATTEMPTS) {
          this.logger.warn(`${what}: deadlock victim, retrying (attempt ${attempt + 1} of ${DEADLOCK_ATTEMPTS})`);
          continue;
        }
        throw isMissingRetiredTable(err) ? retiredTableMissing(what) : err;
      }
    }
  }

  private async findAppIn(em: EntityManager, appId: number): Promise<IdAllocRow[]> {
    const rows = await em.getRepository(IdAllocEntity).find({ where: { appId }, order: { shardId: 'ASC' } });
    return rows.map(toRow);
  }
}

function retiredTableMissing(what: string): IdGenError {
  return new IdGenError(
    ErrorKind.Internal,
    `cannot ${what}: table id_alloc_retired is missing; run the migrations (DB_MIGRATIONS_RUN=true) first`,
  );
}

function isMissingRetiredTable(err: unknown): boolean {
  return errnoOf(err) === ER_NO_SUCH_TABLE && err instanceof Error && err.message.includes('id_alloc_retired');
}

function toRetired(r: { app_id: number | string; shard_id: number | string; max_id: string }): RetiredShard {
  return { appId: Number(r.app_id), shardId: Number(r.shard_id), maxId: BigInt(r.max_id) };
}

function toRow(e: IdAllocEntity): IdAllocRow {
  return {
    appId: Number(e.appId),
    appName: e.appName,
    shardId: Number(e.shardId),
    maxId: BigInt(e.maxId),
    step: Number(e.step),
    description: e.description,
    maxLimitId: BigInt(e.maxLimitId),
    createTime: e.createTime,
    updateTime: e.updateTime,
  };
}
