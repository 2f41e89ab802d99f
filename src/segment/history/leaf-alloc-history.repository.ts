import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SqlCalls } from '../../infra/database/sql-calls';
import { rowsOrNoneWithoutTable, sqlUtc } from '../../infra/database/mysql-errors';

/** A range of IDs one fetch or lease of a tag took, and when (the database's UTC time). */
export interface AllocatedIds {
  from: bigint;
  to: bigint;
  allocatedAt: Date;
}

interface RangeRow {
  from_id: string;
  to_id: string;
  allocated_at: Date;
}

/** Reads of `leaf_alloc_history` (written by LeafAllocHistoryWriter); each bounded by DB_QUERY_TIMEOUT_MS (sql-calls.ts). */
@Injectable()
export class LeafAllocHistoryRepository {
  private readonly db: SqlCalls;

  constructor(dataSource: DataSource) {
    this.db = new SqlCalls(dataSource);
  }

  /** The range of the tag holding `id`, or null (older than the history, or never allocated). */
  async rangeOf(tag: string, id: bigint): Promise<AllocatedIds | null> {
    const rows = await this.read(
      `reading the allocation of '${tag}' ID ${id}`,
      'SELECT from_id, to_id, allocated_at FROM leaf_alloc_history WHERE biz_tag = ? AND to_id >= ? ORDER BY to_id LIMIT 1',
      [tag, id.toString()],
    );
    const range = rows[0] ? toRange(rows[0]) : null;
    return range !== null && range.from <= id ? range : null;
  }

  /** The first range of the tag allocated at or after `time`; the tag's ranges increase with time. */
  async firstAtOrAfter(tag: string, time: Date): Promise<AllocatedIds | null> {
    const rows = await this.read(
      `finding the first allocation of '${tag}' at or after ${time.toISOString()}`,
      'SELECT from_id, to_id, allocated_at FROM leaf_alloc_history WHERE biz_tag = ? AND allocated_at >= ? ' +
        'ORDER BY allocated_at, to_id LIMIT 1',
      [tag, sqlUtc(time)],
    );
    return rows[0] ? toRange(rows[0]) : null;
  }

  /** One bounded read; none at all without the table (migrations not run: nothing is recorded). */
  private read(what: string, sql: string, params: unknown[]): Promise<RangeRow[]> {
    return rowsOrNoneWithoutTable(this.db.query<RangeRow[]>(what, sql, params));
  }
}

function toRange(row: RangeRow): AllocatedIds {
  return { from: BigInt(row.from_id), to: BigInt(row.to_id), allocatedAt: row.allocated_at };
}
