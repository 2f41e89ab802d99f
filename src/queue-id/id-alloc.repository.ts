import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { INDEX_SHIFT, MAX_INDEX, lowBits, maxIndexFor } from './core/queue-id-layout';
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

/** MySQL/MariaDB: PROCEDURE … does not exist. */
const ER_SP_DOES_NOT_EXIST = 1305;

/** The one row `shardleaf_id_alloc_next` selects (BIGINTs as decimal strings). */
interface ProcedureRow {
  found: number | string;
  old_max_id: string | null;
  new_max_id: string | null;
  step: number | string | null;
  max_limit_id: string | null;
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
  private readonly logger = new Logger(IdAllocRepository.name);
  /** Cleared once the server says the procedure does not exist. */
  private procedureAvailable = true;

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
   *
   * One round trip: `CALL shardleaf_id_alloc_next(…)` (migration 1763770500000) runs that
   * transaction inside the server. On a database without the procedure (the seed's own DDL, not
   * migrated) the same transaction is sent statement by statement (four round trips).
   */
  async allocate(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    if (this.procedureAvailable) {
      try {
        return await this.allocateByProcedure(appId, shardId, minWanted);
      } catch (err) {
        if (!isMissingProcedure(err)) {
          throw err;
        }
        this.procedureAvailable = false;
        this.logger.warn(
          'stored procedure shardleaf_id_alloc_next is missing (migrations not run?): refills use a 4-statement transaction',
        );
      }
    }
    return this.allocateByTransaction(appId, shardId, minWanted);
  }

  private async allocateByProcedure(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    const result: unknown = await this.dataSource.query('CALL shardleaf_id_alloc_next(?, ?, ?, ?, ?, ?)', [
      appId,
      shardId,
      Math.max(1, minWanted),
      lowBits(appId, shardId).toString(),
      (1n << INDEX_SHIFT).toString(),
      MAX_INDEX.toString(),
    ]);
    // mysql2 answers a CALL with [rows of the SELECT, the CALL's OK packet].
    const row = (Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as unknown[])[0] : undefined) as
      | ProcedureRow
      | undefined;
    if (!row) {
      throw new Error('shardleaf_id_alloc_next returned no row');
    }
    if (Number(row.found) !== 1) {
      return null;
    }
    if (row.old_max_id === null || row.step === null || row.max_limit_id === null) {
      throw new Error('shardleaf_id_alloc_next returned a row with NULL columns');
    }
    const oldMaxId = BigInt(row.old_max_id);
    const step = Number(row.step);
    const maxIndex = maxIndexFor(appId, shardId, BigInt(row.max_limit_id));
    const segment = row.new_max_id === null ? null : { from: rangeStart(oldMaxId), to: BigInt(row.new_max_id) };
    // The procedure mirrors planSegment; a difference would be a bug there. The committed range is
    // ours either way (uniqueness holds), but a wrong limit must not reach the caller.
    const planned = planSegment(oldMaxId, step, maxIndex, minWanted);
    if (planned?.from !== segment?.from || planned?.to !== segment?.to) {
      throw new Error(
        `shardleaf_id_alloc_next gave ${fmt(segment)} where planSegment gives ${fmt(planned)} (app ${appId} shard ${shardId})`,
      );
    }
    return { segment, step, maxIndex };
  }

  private async allocateByTransaction(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
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

function isMissingProcedure(err: unknown): boolean {
  const e = err as { errno?: unknown; driverError?: { errno?: unknown } } | null;
  return e?.errno === ER_SP_DOES_NOT_EXIST || e?.driverError?.errno === ER_SP_DOES_NOT_EXIST;
}

/** planSegment's first index after `maxId`. */
function rangeStart(maxId: bigint): bigint {
  return maxId + 1n > 0n ? maxId + 1n : 0n;
}

function fmt(segment: SegmentPlan | null | undefined): string {
  return segment ? `${segment.from}..${segment.to}` : 'nothing';
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
