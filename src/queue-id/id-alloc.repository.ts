import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { maxIndexFor } from './core/queue-id-layout';
import { SegmentPlan, planSegment } from './core/refill-policy';
import { IdAllocEntity } from './id-alloc.entity';

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

export interface AllocationResult {
  /** The indexes now owned by the caller, or null when the shard's space is used up. */
  segment: SegmentPlan | null;
  step: number;
  maxIndex: bigint;
}

export interface NewApp {
  appId: number;
  appName: string;
  step: number;
  maxLimitId: bigint;
  description: string | null;
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
  constructor(private readonly dataSource: DataSource) {}

  async findAll(): Promise<IdAllocRow[]> {
    const rows = await this.dataSource.getRepository(IdAllocEntity).find({ order: { appId: 'ASC', shardId: 'ASC' } });
    return rows.map(toRow);
  }

  async findApp(appId: number): Promise<IdAllocRow[]> {
    const rows = await this.dataSource
      .getRepository(IdAllocEntity)
      .find({ where: { appId }, order: { shardId: 'ASC' } });
    return rows.map(toRow);
  }

  /**
   * Takes the next segment of a shard: the row is locked, advanced and committed in one
   * transaction, so two callers (any instance) always get disjoint index ranges. The segment
   * never passes the index limit implied by `max_limit_id`.
   */
  async allocate(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    return this.dataSource.transaction(async (em) => {
      const rows: Array<{ max_id: string; step: number; max_limit_id: string }> = await em.query(
        'SELECT max_id, step, max_limit_id FROM id_alloc WHERE app_id = ? AND shard_id = ? FOR UPDATE',
        [appId, shardId],
      );
      const row = rows[0];
      if (!row) {
        return null;
      }
      const step = Number(row.step);
      const maxIndex = maxIndexFor(appId, shardId, BigInt(row.max_limit_id));
      const segment = planSegment(BigInt(row.max_id), step, maxIndex, minWanted);
      if (segment) {
        await em.query('UPDATE id_alloc SET max_id = ? WHERE app_id = ? AND shard_id = ?', [
          segment.to.toString(),
          appId,
          shardId,
        ]);
      }
      return { segment, step, maxIndex };
    });
  }

  /**
   * Inserts the app's missing shard rows (seed's alloc_initData: max_id 0, so the first index is
   * 1). Returns the rows as they stand afterwards and how many were inserted.
   */
  async createApp(app: NewApp, shardCount: number): Promise<{ rows: IdAllocRow[]; inserted: number }> {
    return this.dataSource.transaction(async (em) => {
      const values: unknown[] = [];
      const tuples: string[] = [];
      for (let shard = 0; shard < shardCount; shard++) {
        tuples.push('(?, ?, 0, ?, ?, ?, ?)');
        values.push(app.appId, app.appName, shard, app.step, app.description, app.maxLimitId.toString());
      }
      const result: { affectedRows: number } = await em.query(
        `INSERT IGNORE INTO id_alloc (app_id, app_name, max_id, shard_id, step, description, max_limit_id) VALUES ${tuples.join(', ')}`,
        values,
      );
      const rows = await this.findAppIn(em, app.appId);
      return { rows, inserted: Number(result.affectedRows) };
    });
  }

  async updateApp(appId: number, patch: AppPatch): Promise<IdAllocRow[]> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (patch.appName !== undefined) {
      sets.push('app_name = ?');
      values.push(patch.appName);
    }
    if (patch.step !== undefined) {
      sets.push('step = ?');
      values.push(patch.step);
    }
    if (patch.maxLimitId !== undefined) {
      sets.push('max_limit_id = ?');
      values.push(patch.maxLimitId.toString());
    }
    if (patch.description !== undefined) {
      sets.push('description = ?');
      values.push(patch.description);
    }
    if (sets.length > 0) {
      await this.dataSource.query(`UPDATE id_alloc SET ${sets.join(', ')} WHERE app_id = ?`, [...values, appId]);
    }
    return this.findApp(appId);
  }

  async deleteApp(appId: number): Promise<number> {
    const result: { affectedRows: number } = await this.dataSource.query('DELETE FROM id_alloc WHERE app_id = ?', [
      appId,
    ]);
    return Number(result.affectedRows);
  }

  private async findAppIn(em: EntityManager, appId: number): Promise<IdAllocRow[]> {
    const rows = await em.getRepository(IdAllocEntity).find({ where: { appId }, order: { shardId: 'ASC' } });
    return rows.map(toRow);
  }
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
