import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ID_HISTORY_CONFIG, REDIS_CONFIG } from '../config/config-tokens';
import { IdHistoryConfig } from '../config/id-history-config';
import { RedisConfig } from '../config/redis-config';
import { SqlCalls } from '../infra/database/sql-calls';
import { ER_NO_SUCH_TABLE, errnoOf } from '../infra/database/mysql-errors';
import { LockService } from '../infra/redis/lock.service';
import { HistoryMonitor } from './history-monitor';

/** The allocation history tables (queue IDs, segment IDs); each has an index on allocated_at. */
export const HISTORY_TABLES = ['id_alloc_history', 'leaf_alloc_history'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];

/** Each table's primary key: the rows of a batch are deleted by these. */
const PRIMARY_KEYS: Record<HistoryTable, readonly string[]> = {
  id_alloc_history: ['app_id', 'shard_id', 'to_index'],
  leaf_alloc_history: ['biz_tag', 'to_id'],
};

/** Rows one DELETE removes; small enough to hold row locks briefly under traffic. */
const BATCH = 1000;
/** Batches one run removes at most per table (a backlog is worked off over several runs). */
const MAX_BATCHES = 2000;
/** The lock one scheduled run holds (released when it ends): the other instances skip that tick. */
const PRUNE_LOCK_TTL_MS = 15 * 60_000;

/**
 * Deletes allocation history older than ID_HISTORY_RETENTION_DAYS (by the database's clock), in
 * batches of 1000 rows: the oldest rows' primary keys are read, then deleted by those keys, each
 * statement bounded by DB_QUERY_TIMEOUT_MS like every other MySQL call (an indexed read and delete
 * of 1000 rows take milliseconds; a batch cut by the bound ends the run, and the next run deletes
 * what is left). A DELETE … ORDER BY … LIMIT would be unsafe for statement-based binary logging (a
 * replica could delete other rows); a DELETE naming its rows is not. A scheduled run takes a Redis
 * lock first: one instance prunes, the others skip that tick.
 */
@Injectable()
export class HistoryPruner {
  private readonly logger = new Logger(HistoryPruner.name);
  private readonly db: SqlCalls;

  constructor(
    dataSource: DataSource,
    @Inject(REDIS_CONFIG) private readonly redis: RedisConfig,
    @Inject(ID_HISTORY_CONFIG) private readonly idHistory: IdHistoryConfig,
    private readonly monitor: HistoryMonitor,
    private readonly locks: LockService,
  ) {
    this.db = new SqlCalls(dataSource);
  }

  /** A scheduled run: prunes under the lock, or does nothing (null) while another instance holds it. */
  async pruneAlone(): Promise<Record<HistoryTable, number> | null> {
    const outcome = await this.locks.withLock(`${this.redis.keyPrefix}lock_history_prune`, { ttlMs: PRUNE_LOCK_TTL_MS }, () =>
      this.prune(),
    );
    return outcome.acquired ? outcome.value : null;
  }

  /** Rows deleted per table; a table that does not exist (migrations not run) is skipped. */
  async prune(): Promise<Record<HistoryTable, number>> {
    const deleted = { id_alloc_history: 0, leaf_alloc_history: 0 };
    const [{ cutoff }] = await this.db.query<Array<{ cutoff: string }>>(
      'reading the retention cutoff',
      "SELECT DATE_FORMAT(UTC_TIMESTAMP(3) - INTERVAL ? DAY, '%Y-%m-%d %H:%i:%s.%f') AS cutoff",
      [this.idHistory.retentionDays],
    );
    for (const table of HISTORY_TABLES) {
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        let found: number;
        let rows: number;
        try {
          ({ found, rows } = await this.pruneBatch(table, cutoff));
        } catch (err) {
          if (errnoOf(err) === ER_NO_SUCH_TABLE) {
            break;
          }
          throw err;
        }
        deleted[table] += rows;
        this.monitor.pruned(table, rows);
        if (found < BATCH) {
          break;
        }
      }
    }
    this.monitor.pruneDone();
    if (deleted.id_alloc_history + deleted.leaf_alloc_history > 0) {
      this.logger.log(
        `allocation history older than ${this.idHistory.retentionDays} days pruned: ` +
          `${deleted.id_alloc_history} queue ranges, ${deleted.leaf_alloc_history} segment ranges`,
      );
    }
    return deleted;
  }

  /** Deletes up to BATCH of the oldest rows before `cutoff` by their primary keys: how many it found, and deleted. */
  private async pruneBatch(table: HistoryTable, cutoff: string): Promise<{ found: number; rows: number }> {
    const key = PRIMARY_KEYS[table];
    const rows = await this.db.query<Array<Record<string, unknown>>>(
      `finding ${table} rows to prune`,
      `SELECT ${key.join(', ')} FROM ${table} WHERE allocated_at < ? ORDER BY allocated_at LIMIT ${BATCH}`,
      [cutoff],
    );
    if (rows.length === 0) {
      return { found: 0, rows: 0 };
    }
    const tuple = `(${key.map(() => '?').join(', ')})`;
    const result = await this.db.query<{ affectedRows: number }>(
      `pruning ${table}`,
      `DELETE FROM ${table} WHERE (${key.join(', ')}) IN (${rows.map(() => tuple).join(', ')}) AND allocated_at < ?`,
      [...rows.flatMap((r) => key.map((k) => r[k])), cutoff],
    );
    return { found: rows.length, rows: Number(result.affectedRows) };
  }
}
