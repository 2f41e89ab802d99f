import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ER_LOCK_DEADLOCK, errnoOf } from '../infra/database/mysql-errors';
import { setClause } from '../infra/database/set-clause';
import { Sql, SqlCalls } from '../infra/database/sql-calls';
import { patternsOverlap } from './core/number-pattern';
import { ResetPeriod } from './core/period';
import { storedPattern, storedReset } from './stored-format';

export interface NewNumberFormat {
  key: string;
  pattern: string;
  reset: ResetPeriod;
  step: number;
  description: string | null;
  /** Create it even when its pattern can print what another key's can (not stored). */
  allowTextOverlap?: boolean;
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

/** A format of another key whose pattern can print the same text: live, or deleted at `deletedAt`. */
export interface OverlappingFormat {
  key: string;
  pattern: string;
  deletedAt: Date | null;
}

export type CreateOutcome =
  | { kind: 'created'; resumed: boolean }
  | { kind: 'exists' }
  | { kind: 'retired-differs'; retired: RetiredFormat }
  | { kind: 'overlaps'; other: OverlappingFormat };

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

/** Attempts of a create chosen as a deadlock victim (a rolled-back try changed nothing). */
const CREATE_ATTEMPTS = 8;

const SELECT_FORMATS = `
  SELECT f.fmt_key, f.pattern, f.reset_period, f.step, f.description, f.create_time, f.update_time, s.period, s.max_seq
  FROM number_format f
  LEFT JOIN number_seq s ON s.fmt_key = f.fmt_key
    AND s.period = (SELECT MAX(m.period) FROM number_seq m WHERE m.fmt_key = f.fmt_key)`;

/**
 * The admin API's reads and writes of `number_format` and its tombstones; every call time-bounded.
 * Times are written with UTC_TIMESTAMP() (the columns' CURRENT_TIMESTAMP defaults follow the
 * session's time zone) and read as UTC.
 */
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
   * else is refused and nothing is written. Unless `allowTextOverlap`, a pattern that can print
   * text a live or deleted format of another key can print is refused too (numbers would repeat
   * across keys). The INSERT comes first: from then on this transaction holds the new row's lock,
   * and a delete of the key committed its tombstone before (a delete writes it holding the old row's
   * lock). Then every format and tombstone is read with a locking read: a delete or another create
   * waits for this one (two creates may deadlock there: the victim is tried again), so two
   * overlapping patterns never both get in.
   */
  async create(format: NewNumberFormat): Promise<CreateOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createOnce(format);
      } catch (err) {
        if (err instanceof Refused) {
          return err.outcome;
        }
        if (errnoOf(err) !== ER_LOCK_DEADLOCK || attempt >= CREATE_ATTEMPTS) {
          throw err;
        }
        // Apart, so the creates that deadlocked do not meet again at once.
        await new Promise((resolve) => setTimeout(resolve, attempt * (10 + Math.random() * 40)));
      }
    }
  }

  private createOnce(format: NewNumberFormat): Promise<CreateOutcome> {
    return this.db.transaction(`creating number format '${format.key}'`, async (q): Promise<CreateOutcome> => {
      const inserted = await q<{ affectedRows: number }>(
        'INSERT IGNORE INTO number_format (fmt_key, pattern, reset_period, step, description, create_time, update_time) ' +
          'VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())',
        [format.key, format.pattern, format.reset, format.step, format.description],
      );
      if (Number(inserted.affectedRows) !== 1) {
        return { kind: 'exists' };
      }
      const live = await q<Array<{ fmt_key: string; pattern: string }>>('SELECT fmt_key, pattern FROM number_format FOR UPDATE');
      const tombstones = await q<Array<{ fmt_key: string; pattern: string; reset_period: string; deleted_at: Date }>>(
        'SELECT fmt_key, pattern, reset_period, deleted_at FROM number_format_retired FOR UPDATE',
      );
      const own = tombstones.find((t) => t.fmt_key === format.key);
      const retired = own ? { pattern: own.pattern, reset: storedReset(own.reset_period, own.fmt_key), deletedAt: own.deleted_at } : null;
      // Compared as stored now (a tombstone written before widths were stored without leading zeros).
      if (retired !== null && (storedPattern(retired.pattern, format.key).source !== format.pattern || retired.reset !== format.reset)) {
        // Rolled back with the transaction: SqlCalls rolls back on a throw.
        throw new Refused({ kind: 'retired-differs', retired });
      }
      if (!format.allowTextOverlap) {
        const pattern = storedPattern(format.pattern, format.key);
        const others: OverlappingFormat[] = [
          ...live.map((f) => ({ key: f.fmt_key, pattern: f.pattern, deletedAt: null })),
          ...tombstones.map((t) => ({ key: t.fmt_key, pattern: t.pattern, deletedAt: t.deleted_at })),
        ];
        const other = others.find((o) => o.key !== format.key && patternsOverlap(pattern, storedPattern(o.pattern, o.key)));
        if (other) {
          throw new Refused({ kind: 'overlaps', other });
        }
      }
      return { kind: 'created', resumed: retired !== null };
    });
  }

  async update(key: string, patch: NumberFormatPatch): Promise<boolean> {
    const set = setClause({ step: patch.step, description: patch.description });
    const sets = ['update_time = UTC_TIMESTAMP()', ...(set.sql === '' ? [] : [set.sql])];
    const result = await this.db.query<{ affectedRows: number }>(
      `changing number format '${key}'`,
      `UPDATE number_format SET ${sets.join(', ')} WHERE fmt_key = ?`,
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
        'INSERT INTO number_format_retired (fmt_key, pattern, reset_period, deleted_at) VALUES (?, ?, ?, UTC_TIMESTAMP()) ' +
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
    return row ? { pattern: row.pattern, reset: storedReset(row.reset_period, key), deletedAt: row.deleted_at } : null;
  }
}

/** Thrown inside the create transaction to roll it back. */
class Refused extends Error {
  constructor(readonly outcome: CreateOutcome) {
    super(`number format refused: ${outcome.kind}`);
  }
}

function toRow(r: FormatDbRow): NumberFormatRow {
  return {
    key: r.fmt_key,
    pattern: r.pattern,
    reset: storedReset(r.reset_period, r.fmt_key),
    step: Number(r.step),
    description: r.description,
    createTime: r.create_time,
    updateTime: r.update_time,
    latest: r.period === null || r.max_seq === null ? null : { period: r.period, maxSeq: BigInt(r.max_seq) },
  };
}
