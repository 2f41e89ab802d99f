import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SqlCalls } from '../../infra/database/sql-calls';
import { rowsOrNoneWithoutTable, sqlUtc } from '../../infra/database/mysql-errors';

/** A range of indexes one allocation took, and when (the database's UTC time). */
export interface AllocatedRange {
  from: bigint;
  to: bigint;
  allocatedAt: Date;
}

interface RangeRow {
  from_index: string;
  to_index: string;
  allocated_at: Date;
}

/**
 * Reads of `id_alloc_history`, which the allocation procedure writes (migration 1763771000000).
 * Every read is bounded by DB_QUERY_TIMEOUT_MS (sql-calls.ts).
 */
@Injectable()
export class IdAllocHistoryRepository {
  private readonly db: SqlCalls;

  constructor(dataSource: DataSource) {
    this.db = new SqlCalls(dataSource);
  }

  /** The range holding `index` of the shard, or null (older than the history, or never allocated). */
  async rangeOf(appId: number, shardId: number, index: bigint): Promise<AllocatedRange | null> {
    const rows = await this.read(
      `reading the allocation of app ${appId} shard ${shardId} index ${index}`,
      'SELECT from_index, to_index, allocated_at FROM id_alloc_history WHERE app_id = ? AND shard_id = ? AND to_index >= ? ' +
        'ORDER BY to_index LIMIT 1',
      [appId, shardId, index.toString()],
    );
    const range = rows[0] ? toRange(rows[0]) : null;
    return range !== null && range.from <= index ? range : null;
  }

  /**
   * The first range the shard allocated at or after `time`. A shard's ranges increase with time,
   * so its first index is the lowest index of the shard allocated at or after `time`, and every
   * higher index was allocated at or after it too.
   */
  async firstAtOrAfter(appId: number, shardId: number, time: Date): Promise<AllocatedRange | null> {
    const rows = await this.read(
      `finding the first allocation of app ${appId} shard ${shardId} at or after ${time.toISOString()}`,
      'SELECT from_index, to_index, allocated_at FROM id_alloc_history WHERE app_id = ? AND shard_id = ? AND allocated_at >= ? ' +
        'ORDER BY allocated_at, to_index LIMIT 1',
      [appId, shardId, sqlUtc(time)],
    );
    return rows[0] ? toRange(rows[0]) : null;
  }

  /** One bounded read; none at all without the table (migrations not run: nothing is recorded). */
  private read(what: string, sql: string, params: unknown[]): Promise<RangeRow[]> {
    return rowsOrNoneWithoutTable(this.db.query<RangeRow[]>(what, sql, params));
  }
}

function toRange(row: RangeRow): AllocatedRange {
  return { from: BigInt(row.from_index), to: BigInt(row.to_index), allocatedAt: row.allocated_at };
}
