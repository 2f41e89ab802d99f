import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SqlCalls } from '../infra/database/sql-calls';
import { parsePattern } from './core/number-pattern';
import { Allocation, AllocationRequest, ClockReading, NumberStore, segmentSize } from './core/number-store';
import { RESET_PERIODS, ResetPeriod, allocationPeriod, parseDbTime } from './core/period';

/** The database clock as text the core reads (`YYYY-MM-DD HH:MM:SS.ffffff`), whatever the driver's time zone. */
const CLOCK = "DATE_FORMAT(c.db_now, '%Y-%m-%d %H:%i:%s.%f')";

/**
 * The number generator's port on MySQL/MariaDB (`number_format`, `number_seq`, the
 * `shardleaf_db_clock` view). Every statement is bounded by DB_QUERY_TIMEOUT_MS (sql-calls.ts): an
 * allocation cut by it is a gap, never resent.
 */
@Injectable()
export class NumberSequenceRepository implements NumberStore {
  private readonly db: SqlCalls;

  constructor(dataSource: DataSource) {
    this.db = new SqlCalls(dataSource);
  }

  /**
   * One transaction: lock the format's row (every allocation of the key, from any instance, waits
   * here), then read the database clock and the latest period used, then advance that period's
   * sequence by the segment size, capped at the pattern's capacity. The clock is read under the
   * lock, so allocations of a key move through periods in lock order and never back
   * (allocationPeriod). Nothing is written when the period is used up.
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
      const reset = resetOf(format.reset_period, key);
      const clock = await q<Array<{ db_now: string | null; latest: string | null }>>(
        `SELECT ${CLOCK} AS db_now, (SELECT MAX(period) FROM number_seq WHERE fmt_key = ?) AS latest FROM shardleaf_db_clock c`,
        [key],
      );
      const dbNow = String(clock[0]?.db_now);
      const period = allocationPeriod(reset, parseDbTime(dbNow), clock[0]?.latest ?? null);
      // The format's row lock orders every writer of these rows: a plain read sees the last commit.
      const rows = await q<Array<{ max_seq: string }>>('SELECT max_seq FROM number_seq WHERE fmt_key = ? AND period = ?', [
        key,
        period.key,
      ]);
      const old = rows[0] ? BigInt(rows[0].max_seq) : 0n;
      const capacity = parsePattern(format.pattern).capacity;
      const base = { pattern: format.pattern, reset, period: period.key, dbNow };
      if (old >= capacity) {
        return { kind: 'exhausted', ...base };
      }
      const size = segmentSize(Number(format.step), request, capacity);
      const to = old + size > capacity ? capacity : old + size;
      await q(
        'INSERT INTO number_seq (fmt_key, period, max_seq, update_time) VALUES (?, ?, ?, UTC_TIMESTAMP(3)) ' +
          'ON DUPLICATE KEY UPDATE max_seq = VALUES(max_seq), update_time = VALUES(update_time)',
        [key, period.key, to.toString()],
      );
      return { kind: 'allocated', ...base, from: old + 1n, to };
    });
  }

  /** The database clock, and whether the format still exists: one read, nothing locked. */
  async readClock(key: string): Promise<ClockReading> {
    const rows = await this.db.query<Array<{ db_now: string | null; pattern: string | null; reset_period: string | null }>>(
      `reading the database clock for '${key}'`,
      `SELECT ${CLOCK} AS db_now, f.pattern, f.reset_period FROM shardleaf_db_clock c LEFT JOIN number_format f ON f.fmt_key = ?`,
      [key],
    );
    const row = rows[0];
    return {
      dbNow: String(row?.db_now),
      format: row?.pattern ? { pattern: row.pattern, reset: resetOf(row.reset_period, key) } : null,
    };
  }
}

/** A reset period read back from a row (written by the admin API, or by hand). */
export function resetOf(value: unknown, key: string): ResetPeriod {
  if (!(RESET_PERIODS as readonly unknown[]).includes(value)) {
    throw new Error(`number_format '${key}' has reset_period '${String(value)}'; it must be one of ${RESET_PERIODS.join(', ')}`);
  }
  return value as ResetPeriod;
}
