import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { NUMBERS_CONFIG } from '../config/config-tokens';
import { NumbersConfig } from '../config/numbers-config';
import { SqlCalls } from '../infra/database/sql-calls';
import { CLOCK_VIEW, numberClockSql } from './number-clock-sql';
import { storedClock, storedPattern, storedPeriod, storedReset } from './stored-format';
import { Allocation, AllocationRequest, ClockReading, NumberStore, segmentSize } from './core/number-store';
import { allocationPeriod, parseDbTime } from './core/period';

/**
 * The number generator's port on MySQL/MariaDB (`number_format`, `number_seq`, the
 * `shardleaf_db_clock` view read in NUMBER_TIME_ZONE). Every statement is bounded by
 * DB_QUERY_TIMEOUT_MS (sql-calls.ts): an allocation cut by it is a gap, never resent.
 */
@Injectable()
export class NumberSequenceRepository implements NumberStore {
  private readonly db: SqlCalls;
  /** "Now" in NUMBER_TIME_ZONE, from the view (alias `c`). */
  private readonly clock: string;
  private readonly timeZone: string;

  constructor(dataSource: DataSource, @Inject(NUMBERS_CONFIG) numbers: NumbersConfig) {
    this.db = new SqlCalls(dataSource);
    this.timeZone = numbers.timeZone;
    this.clock = numberClockSql(this.timeZone);
  }

  /**
   * One transaction: lock the format's row (every allocation of the key, from any instance, waits
   * here), then read the database clock and the key's latest period and its sequence (one
   * statement, after the lock was granted: its snapshot holds every earlier allocation of the key),
   * so allocations of a key move through periods in lock order and never back (allocationPeriod).
   * The range is what the row write itself moved: `max_seq = LAST_INSERT_ID(max_seq + n)` on the
   * period's row, guarded by the capacity (its new value comes back in the statement's reply), or
   * a plain INSERT of a new period's row (a duplicate key fails it). Uniqueness rests on that write,
   * not on what was read before: a row changed since the read (by hand) shifts the range or fails
   * the call, never repeats a sequence. No locking read: its gap locks would deadlock the inserts of
   * neighbouring keys. Nothing is written when the period is used up.
   */
  allocate(key: string, request: AllocationRequest): Promise<Allocation> {
    return this.db.transaction(`allocating numbers of '${key}'`, async (q): Promise<Allocation> => {
      const formats = await q<Array<{ pattern: string; reset_period: string; step: number | string }>>(
        'SELECT pattern, reset_period, step FROM number_format WHERE fmt_key = ? FOR UPDATE',
        [key],
      );
      const format = formats[0];
      if (!format) {
        return { kind: 'not-found' };
      }
      const reset = storedReset(format.reset_period, key);
      const rows = await q<Array<{ k: string; v: string | null; max_seq: string | null }>>(
        `SELECT 'clock' AS k, ${this.clock} AS v, NULL AS max_seq FROM ${CLOCK_VIEW} c UNION ALL ` +
          "(SELECT 'seq', period, max_seq FROM number_seq WHERE fmt_key = ? ORDER BY period DESC LIMIT 1)",
        [key],
      );
      const dbNow = storedClock(rows.find((r) => r.k === 'clock')?.v, this.timeZone);
      const latest = rows.find((r) => r.k === 'seq') ?? null;
      const period = storedPeriod(key, String(latest?.v), () => allocationPeriod(reset, parseDbTime(dbNow), latest?.v ?? null));
      const old = latest !== null && latest.v === period.key ? BigInt(latest.max_seq ?? 0) : null;
      const capacity = storedPattern(format.pattern, key).capacity;
      const base = { pattern: format.pattern, reset, period: period.key, dbNow };
      if (old !== null && old >= capacity) {
        return { kind: 'exhausted', ...base };
      }
      const size = segmentSize(Number(format.step), request, capacity);
      const n = (old ?? 0n) + size > capacity ? capacity - (old ?? 0n) : size;
      if (old === null) {
        await q('INSERT INTO number_seq (fmt_key, period, max_seq, update_time) VALUES (?, ?, ?, UTC_TIMESTAMP(3))', [
          key,
          period.key,
          n.toString(),
        ]);
        return { kind: 'allocated', ...base, from: 1n, to: n };
      }
      const moved = await q<{ affectedRows: number; insertId?: number | string }>(
        'UPDATE number_seq SET max_seq = LAST_INSERT_ID(max_seq + ?), update_time = UTC_TIMESTAMP(3) ' +
          'WHERE fmt_key = ? AND period = ? AND max_seq <= ?',
        [n.toString(), key, period.key, (capacity - n).toString()],
      );
      if (Number(moved.affectedRows) !== 1 || moved.insertId === undefined) {
        throw new IdGenError(
          ErrorKind.BackendUnavailable,
          `number_seq of '${key}', period '${period.key}', was changed by another writer during the allocation (nothing allocated); retry`,
        );
      }
      const to = BigInt(moved.insertId);
      return { kind: 'allocated', ...base, from: to - n + 1n, to };
    });
  }

  /** The database clock, and whether the format still exists: one read, nothing locked. */
  async readClock(key: string): Promise<ClockReading> {
    const rows = await this.db.query<Array<{ db_now: string | null; pattern: string | null; reset_period: string | null }>>(
      `reading the database clock for '${key}'`,
      `SELECT ${this.clock} AS db_now, f.pattern, f.reset_period FROM ${CLOCK_VIEW} c LEFT JOIN number_format f ON f.fmt_key = ?`,
      [key],
    );
    const row = rows[0];
    return {
      dbNow: storedClock(row?.db_now, this.timeZone),
      format: row?.pattern ? { pattern: storedPattern(row.pattern, key).source, reset: storedReset(row.reset_period, key) } : null,
    };
  }

  /**
   * The start's check of the clock view: its time in NUMBER_TIME_ZONE (checked as every reading
   * is), how far the view is from the database's UTC clock and the database's NOW() offset (min).
   */
  async checkClock(): Promise<{ dbNow: string; viewMinusUtcS: number; nowOffsetMin: number }> {
    const rows = await this.db.query<Array<{ t: string | null; view_s: number | string | null; now_min: number | string }>>(
      'checking the database clock view',
      `SELECT ${this.clock} AS t, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(3), c.db_now) AS view_s, ` +
        `ROUND(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) / 60) AS now_min FROM ${CLOCK_VIEW} c`,
    );
    const row = rows[0];
    return { dbNow: storedClock(row?.t, this.timeZone), viewMinusUtcS: Number(row?.view_s), nowOffsetMin: Number(row?.now_min) };
  }
}
