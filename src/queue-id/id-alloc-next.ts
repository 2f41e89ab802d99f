import { Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MissingRecheck } from '../infra/database/missing-recheck';
import { ER_NO_SUCH_TABLE, ER_SP_DOES_NOT_EXIST, errnoOf } from '../infra/database/mysql-errors';
import { INDEX_SHIFT, MAX_INDEX, lowBits, maxIndexFor } from './core/queue-id-layout';
import { SegmentPlan, firstIndexAfter, planSegment } from './core/refill-policy';

export interface AllocationResult {
  /** The indexes now owned by the caller, or null when the shard's space is used up. */
  segment: SegmentPlan | null;
  step: number;
  maxIndex: bigint;
  /** The row's max_limit_id as read by this allocation (0 = no limit). */
  maxLimitId: bigint;
}

/** The one row `shardleaf_id_alloc_next` selects (BIGINTs as decimal strings). */
interface ProcedureRow {
  found: number | string;
  old_max_id: string | null;
  new_max_id: string | null;
  step: number | string | null;
  max_limit_id: string | null;
}

/**
 * The next segment of an `id_alloc` row, recorded in `id_alloc_history`: the row is locked,
 * advanced and committed in one transaction, so two callers (any instance) always get disjoint
 * index ranges, never past the index limit implied by `max_limit_id`.
 *
 * One round trip: `CALL shardleaf_id_alloc_next(…)` runs that transaction inside the server. When
 * the procedure (or its history table) is missing — a database created by hand, not migrated; a migration
 * replacing the procedure with DROP then CREATE — the same transaction is sent statement by
 * statement, with the history row when its table exists, and the procedure is tried again a
 * minute later (never given up for good).
 */
export class IdAllocNext {
  private readonly logger = new Logger(IdAllocNext.name);
  private readonly procedure = new MissingRecheck();
  private readonly historyTable = new MissingRecheck();

  constructor(private readonly dataSource: DataSource) {}

  async allocate(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    if (this.procedure.shouldTry()) {
      try {
        const result = await this.allocateByProcedure(appId, shardId, minWanted);
        if (this.procedure.markPresent()) {
          this.logger.log('stored procedure shardleaf_id_alloc_next answers again: refills take one round trip');
        }
        return result;
      } catch (err) {
        const errno = errnoOf(err);
        if (errno !== ER_SP_DOES_NOT_EXIST && errno !== ER_NO_SUCH_TABLE) {
          throw err;
        }
        // The procedure rolled back (or never ran): nothing was allocated, the transaction may run.
        if (this.procedure.markMissing()) {
          this.logger.warn(
            'stored procedure shardleaf_id_alloc_next or table id_alloc_history is missing (migrations not run?): ' +
              `refills use a transaction of several statements; tried again every minute (${(err as Error).message})`,
          );
        }
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
    const maxLimitId = BigInt(row.max_limit_id);
    const maxIndex = maxIndexFor(appId, shardId, maxLimitId);
    const segment = row.new_max_id === null ? null : { from: firstIndexAfter(oldMaxId), to: BigInt(row.new_max_id) };
    // The procedure mirrors planSegment; a difference would be a bug there. The committed range is
    // ours either way (uniqueness holds), but a wrong limit must not reach the caller.
    const planned = planSegment(oldMaxId, step, maxIndex, minWanted);
    if (planned?.from !== segment?.from || planned?.to !== segment?.to) {
      throw new Error(
        `shardleaf_id_alloc_next gave ${fmt(segment)} where planSegment gives ${fmt(planned)} (app ${appId} shard ${shardId})`,
      );
    }
    return { segment, step, maxIndex, maxLimitId };
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
      const maxLimitId = BigInt(row.max_limit_id);
      const maxIndex = maxIndexFor(appId, shardId, maxLimitId);
      const segment = planSegment(BigInt(row.max_id), step, maxIndex, minWanted);
      if (segment) {
        await em.query('UPDATE id_alloc SET max_id = ? WHERE app_id = ? AND shard_id = ?', [
          segment.to.toString(),
          appId,
          shardId,
        ]);
        await this.record(em, appId, shardId, segment);
      }
      return { segment, step, maxIndex, maxLimitId };
    });
  }

  /** The range in id_alloc_history, in the allocation's transaction; nothing when the table is missing. */
  private async record(em: EntityManager, appId: number, shardId: number, segment: SegmentPlan): Promise<void> {
    if (!this.historyTable.shouldTry()) {
      return;
    }
    try {
      await em.query(
        'INSERT IGNORE INTO id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3))',
        [appId, shardId, segment.from.toString(), segment.to.toString()],
      );
      this.historyTable.markPresent();
    } catch (err) {
      if (errnoOf(err) !== ER_NO_SUCH_TABLE) {
        throw err;
      }
      this.historyTable.markMissing();
    }
  }
}

function fmt(segment: SegmentPlan | null | undefined): string {
  return segment ? `${segment.from}..${segment.to}` : 'nothing';
}
