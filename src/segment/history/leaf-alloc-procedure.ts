import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MissingRecheck } from '../../infra/database/missing-recheck';
import { ER_NO_SUCH_TABLE, ER_SP_DOES_NOT_EXIST, errnoOf } from '../../infra/database/mysql-errors';

/** How the procedure moves `max_id`: by the row's step, by GREATEST(step, n), or by exactly n (a lease). */
export type LeafAllocMode = 'step' | 'at-least' | 'lease';
const MODES: Record<LeafAllocMode, number> = { step: 0, 'at-least': 1, lease: 2 };

/** What one call did. */
export type LeafAllocCall =
  | { kind: 'moved'; tag: string; maxId: bigint; step: number }
  | { kind: 'no-row' }
  /** A lease on a row whose max_id is below 1 (made by hand): nothing changed. */
  | { kind: 'below-one'; maxId: bigint };

interface ProcedureRow {
  found: number | string;
  tag: string | null;
  max_id: string | number | null;
  step: number | string | null;
}

/** Tags the procedure's parameter holds as they are in any character set of `biz_tag`. */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * `CALL shardleaf_leaf_alloc_next(tag, mode, n)` (migration 1763771300000): a segment fetch or a
 * lease of a `leaf_alloc` tag and its `leaf_alloc_history` row, one transaction in one round trip.
 * `call` answers null when the procedure cannot serve the call: it (or its history table) is
 * missing — tried again a minute later, never given up for good — or the tag is not ASCII. The
 * caller then runs its statement-by-statement transaction. A call that failed otherwise (a time
 * bound, a lost connection) is thrown: what it may have allocated is a gap, never sent again.
 */
@Injectable()
export class LeafAllocProcedure {
  private readonly logger = new Logger(LeafAllocProcedure.name);
  private readonly recheck = new MissingRecheck();

  constructor(private readonly dataSource: DataSource) {}

  async call(tag: string, mode: LeafAllocMode, n: number): Promise<LeafAllocCall | null> {
    if (!ASCII.test(tag) || !this.recheck.shouldTry()) {
      return null;
    }
    let result: unknown;
    try {
      result = await this.dataSource.query('CALL shardleaf_leaf_alloc_next(?, ?, ?)', [tag, MODES[mode], n]);
    } catch (err) {
      const errno = errnoOf(err);
      if (errno !== ER_SP_DOES_NOT_EXIST && errno !== ER_NO_SUCH_TABLE) {
        throw err;
      }
      if (this.recheck.markMissing()) {
        this.logger.warn(
          `stored procedure shardleaf_leaf_alloc_next or table leaf_alloc_history is missing (migrations not run?): ` +
            `segment fetches and leases use a transaction of several statements; tried again every minute (${(err as Error).message})`,
        );
      }
      return null;
    }
    if (this.recheck.markPresent()) {
      this.logger.log('stored procedure shardleaf_leaf_alloc_next answers again: segment fetches and leases take one round trip');
    }
    // mysql2 answers a CALL with [rows of the SELECT, the CALL's OK packet].
    const row = (Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as unknown[])[0] : undefined) as ProcedureRow | undefined;
    if (!row) {
      throw new Error('shardleaf_leaf_alloc_next returned no row');
    }
    const found = Number(row.found);
    if (found === 0) {
      return { kind: 'no-row' };
    }
    if (row.max_id === null || row.step === null) {
      throw new Error('shardleaf_leaf_alloc_next returned a row with NULL columns');
    }
    if (found === 2) {
      return { kind: 'below-one', maxId: BigInt(row.max_id) };
    }
    return { kind: 'moved', tag: row.tag ?? tag, maxId: BigInt(row.max_id), step: Number(row.step) };
  }
}
