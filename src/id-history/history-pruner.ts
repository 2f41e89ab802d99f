import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SqlCalls } from '../infra/database/sql-calls';
import { ER_NO_SUCH_TABLE, errnoOf } from '../infra/database/mysql-errors';
import { HistoryMonitor } from './history-monitor';

/** The allocation history tables (queue IDs, segment IDs); each has an index on allocated_at. */
export const HISTORY_TABLES = ['id_alloc_history', 'leaf_alloc_history'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];

/** Rows one DELETE removes; small enough to hold row locks briefly under traffic. */
const BATCH = 1000;
/** Batches one run removes at most per table (a backlog is worked off over several runs). */
const MAX_BATCHES = 2000;

/**
 * Deletes allocation history older than ID_HISTORY_RETENTION_DAYS (by the database's clock), in
 * batches of 1000 rows, each its own statement bounded by DB_QUERY_TIMEOUT_MS like every other
 * MySQL call (an indexed delete of 1000 rows takes milliseconds; a batch cut by the bound ends the
 * run, and the next run deletes what is left). Several instances may run it at once: their
 * deletes take the same rows in the same order, so one waits for the other.
 */
@Injectable()
export class HistoryPruner {
  private readonly logger = new Logger(HistoryPruner.name);
  private readonly db: SqlCalls;

  constructor(
    dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly monitor: HistoryMonitor,
  ) {
    this.db = new SqlCalls(dataSource);
  }

  /** Rows deleted per table; a table that does not exist (migrations not run) is skipped. */
  async prune(): Promise<Record<HistoryTable, number>> {
    const deleted = { id_alloc_history: 0, leaf_alloc_history: 0 };
    for (const table of HISTORY_TABLES) {
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        let rows: number;
        try {
          const result = await this.db.query<{ affectedRows: number }>(
            `pruning ${table}`,
            `DELETE FROM ${table} WHERE allocated_at < UTC_TIMESTAMP(3) - INTERVAL ? DAY ORDER BY allocated_at LIMIT ${BATCH}`,
            [this.config.idHistory.retentionDays],
          );
          rows = Number(result.affectedRows);
        } catch (err) {
          if (errnoOf(err) === ER_NO_SUCH_TABLE) {
            break;
          }
          throw err;
        }
        deleted[table] += rows;
        this.monitor.pruned(table, rows);
        if (rows < BATCH) {
          break;
        }
      }
    }
    this.monitor.pruneDone();
    if (deleted.id_alloc_history + deleted.leaf_alloc_history > 0) {
      this.logger.log(
        `allocation history older than ${this.config.idHistory.retentionDays} days pruned: ` +
          `${deleted.id_alloc_history} queue ranges, ${deleted.leaf_alloc_history} segment ranges`,
      );
    }
    return deleted;
  }
}
