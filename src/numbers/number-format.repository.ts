import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { setClause } from '../infra/database/set-clause';
import { Sql, SqlCalls } from '../infra/database/sql-calls';
import { ResetPeriod } from './core/period';
import { resetOf } from './number-sequence.repository';

export interface NewNumberFormat {
  key: string;
  pattern: string;
  reset: ResetPeriod;
  step: number;
  description: string | null;
}

export interface NumberFormatPatch {
  step?: number;
  description?: string | null;
}

export interface NumberFormatRow extends NewNumberFormat {
  createTime: Date;
  updateTime: Date;
  /** The latest period allocated and its highest sequence, or null before the first allocation. */
  latest: { period: string; maxSeq: bigint } | null;
}

/** The pattern and reset a key had when it was deleted. */
export interface RetiredFormat {
  pattern: string;
  reset: ResetPeriod;
  deletedAt: Date;
}

export type CreateOutcome =
  | { kind: 'created'; resumed: boolean }
  | { kind: 'exists' }
  | { kind: 'retired-differs'; retired: RetiredFormat };

interface FormatDbRow {
  fmt_key: string;
  pattern: string;
  reset_period: string;
  step: number | string;
  description: string | null;
  create_time: Date;
  update_time: Date;
  period: string | null;
  max_seq: string | null;
}

const SELECT_FORMATS = `
  SELECT f.fmt_key, f.pattern, f.reset_period, f.step, f.description, f.create_time, f.update_time, s.period, s.max_seq
  FROM number_format f
  LEFT JOIN number_seq s ON s.fmt_key = f.fmt_key
    AND s.period = (SELECT MAX(m.period) FROM number_seq m WHERE m.fmt_key = f.fmt_key)`;

/** The admin API's reads and writes of `number_format` and its tombstones; every call time-bounded. */
@Injectable()
export class NumberFormatRepository {
  private readonly db: SqlCalls;

  constructor(dataSource: DataSource) {
    this.db = new SqlCalls(dataSource);
  }

  async findAll(): Promise<NumberFormatRow[]> {
    const rows = await this.db.query<FormatDbRow[]>('listing number formats', `${SELECT_FORMATS} ORDER BY f.fmt_key`);
    return rows.map(toRow);
  }

  async find(key: string): Promise<NumberFormatRow | null> {
    const rows = await this.db.query<FormatDbRow[]>(`reading number format '${key}'`, `${SELECT_FORMATS} WHERE f.fmt_key = ?`, [key]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The latest periods of a key (newest first) with their highest sequence; kept after a delete. */
  async periods(key: string, limit: number): Promise<Array<{ period: string; maxSeq: bigint; updateTime: Date }>> {
    const rows = await this.db.query<Array<{ period: string; max_seq: string; update_time: Date }>>(
      `reading the periods of '${key}'`,
      'SELECT period, max_seq, update_time FROM number_seq WHERE fmt_key = ? ORDER BY period DESC LIMIT ?',
      [key, limit],
    );
    return rows.map((r) => ({ period: r.period, maxSeq: BigInt(r.max_seq), updateTime: r.update_time }));
  }

  /**
   * Inserts the format unless the key exists. A key deleted before must come back with the same
   * pattern and reset (its sequences in number_seq are kept, so it continues above them); anything
   * else is refused and nothing is written. The INSERT comes first: from then on this transaction
   * holds the new row's lock, and a delete of the key committed its tombstone before (a delete
   * writes it holding the old row's lock), so the locking read below sees it.
   */
  create(format: NewNumberFormat): Promise<CreateOutcome> {
    return this.db.transaction(`creating number format '${format.key}'`, async (q): Promise<CreateOutcome> => {
      const inserted = await q<{ affectedRows: number }>(
        'INSERT IGNORE INTO number_format (fmt_key, pattern, reset_period, step, description) VALUES (?, ?, ?, ?, ?)',
        [format.key, format.pattern, format.reset, format.step, format.description],
      );
      if (Number(inserted.affectedRows) !== 1) {
        return { kind: 'exists' };
      }
      const retired = await this.retiredIn(q, format.key, true);
      if (retired === null) {
        return { kind: 'created', resumed: false };
      }
      if (retired.pattern !== format.pattern || retired.reset !== format.reset) {
        // Rolled back with the transaction: SqlCalls rolls back on a throw.
        throw new RetiredDiffers(retired);
      }
      return { kind: 'created', resumed: true };
    }).catch((err: unknown) => {
      if (err instanceof RetiredDiffers) {
        return { kind: 'retired-differs', retired: err.retired };
      }
      throw err;
    });
  }

  async update(key: string, patch: NumberFormatPatch): Promise<boolean> {
    const set = setClause({ step: patch.step, description: patch.description });
    const result = await this.db.query<{ affectedRows: number }>(
      `changing number format '${key}'`,
      `UPDATE number_format SET ${set.sql} WHERE fmt_key = ?`,
      [...set.values, key],
    );
    return Number(result.affectedRows) === 1;
  }

  /**
   * Deletes the format and records its pattern and reset in `number_format_retired`, in one
   * transaction holding the row's lock: an allocation of another instance either committed before
   * or finds no row after. Its sequences stay in number_seq. False when there was no row.
   */
  delete(key: string): Promise<boolean> {
    return this.db.transaction(`deleting number format '${key}'`, async (q) => {
      const rows = await q<Array<{ pattern: string; reset_period: string }>>(
        'SELECT pattern, reset_period FROM number_format WHERE fmt_key = ? FOR UPDATE',
        [key],
      );
      if (!rows[0]) {
        return false;
      }
      await q(
        'INSERT INTO number_format_retired (fmt_key, pattern, reset_period, deleted_at) VALUES (?, ?, ?, CURRENT_TIMESTAMP) ' +
          'ON DUPLICATE KEY UPDATE pattern = VALUES(pattern), reset_period = VALUES(reset_period), deleted_at = VALUES(deleted_at)',
        [key, rows[0].pattern, rows[0].reset_period],
      );
      await q('DELETE FROM number_format WHERE fmt_key = ?', [key]);
      return true;
    });
  }

  retired(key: string): Promise<RetiredFormat | null> {
    return this.db.transaction(`reading the tombstone of '${key}'`, (q) => this.retiredIn(q, key, false));
  }

  private async retiredIn(q: Sql, key: string, lock: boolean): Promise<RetiredFormat | null> {
    const rows = await q<Array<{ pattern: string; reset_period: string; deleted_at: Date }>>(
      `SELECT pattern, reset_period, deleted_at FROM number_format_retired WHERE fmt_key = ?${lock ? ' FOR UPDATE' : ''}`,
      [key],
    );
    const row = rows[0];
    return row ? { pattern: row.pattern, reset: resetOf(row.reset_period, key), deletedAt: row.deleted_at } : null;
  }
}

/** Thrown inside the create transaction to roll it back. */
class RetiredDiffers extends Error {
  constructor(readonly retired: RetiredFormat) {
    super('the key was deleted with another pattern or reset');
  }
}

function toRow(r: FormatDbRow): NumberFormatRow {
  return {
    key: r.fmt_key,
    pattern: r.pattern,
    reset: resetOf(r.reset_period, r.fmt_key),
    step: Number(r.step),
    description: r.description,
    createTime: r.create_time,
    updateTime: r.update_time,
    latest: r.period === null || r.max_seq === null ? null : { period: r.period, maxSeq: BigInt(r.max_seq) },
  };
}
