import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LeafAllocHistoryWriter } from './history/leaf-alloc-history.writer';
import { LeafAllocProcedure } from './history/leaf-alloc-procedure';

/** The OK packet of an UPDATE (mysql2 through TypeORM's `query`). */
interface UpdateResult {
  affectedRows?: number;
  /** LAST_INSERT_ID(expr): a number when below 2^53, a decimal string above (supportBigNumbers). */
  insertId?: number | string;
}

/**
 * The lease's row update on `leaf_alloc`: `max_id = max_id + count` and the range recorded in
 * `leaf_alloc_history`, in one transaction: one round trip (`shardleaf_leaf_alloc_next`), or,
 * without the procedure, the UPDATE (the new `max_id` read back in its reply, `LAST_INSERT_ID(expr)`)
 * and the history INSERT statement by statement.
 * The range is Leaf's: a fetch that moves `max_id` from M to M + n owns the IDs M .. M + n - 1
 * (SegmentBuffer.fill). The row's `step` is not used: a lease
 * takes exactly `count`, and the generator's own fetches (`max_id + GREATEST(step, …)`) on any
 * instance take the ranges after or before it.
 */
@Injectable()
export class LeafAllocLeaseRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly history: LeafAllocHistoryWriter,
    private readonly procedure: LeafAllocProcedure,
  ) {}

  /**
   * The new `max_id` after adding `count`; null when the tag has no row (never created, or
   * deleted); `{ belowOne }` when the row's max_id is below 1 (made by hand): the lease would
   * hold IDs below 1, so the row is left unchanged (and LAST_INSERT_ID cannot hold a negative).
   */
  async advance(tag: string, count: number): Promise<bigint | null | { belowOne: bigint }> {
    const called = await this.procedure.call(tag, 'lease', count);
    if (called !== null) {
      return called.kind === 'moved' ? called.maxId : called.kind === 'no-row' ? null : { belowOne: called.maxId };
    }
    return this.dataSource.transaction(async (em) => {
      const result: UpdateResult = await em.query(
        'UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + ?) WHERE biz_tag = ? AND max_id >= 1',
        [count, tag],
      );
      if (Number(result.affectedRows) !== 1) {
        // No row, or one below 1: told apart only on this rare path.
        const rows: Array<{ max_id: string | number }> = await em.query('SELECT max_id FROM leaf_alloc WHERE biz_tag = ?', [tag]);
        return rows.length === 0 ? null : { belowOne: BigInt(rows[0].max_id) };
      }
      if (result.insertId === undefined || result.insertId === null) {
        throw new Error('leaf_alloc lease: the UPDATE reply carries no LAST_INSERT_ID');
      }
      const maxId = BigInt(result.insertId);
      await this.history.record(em, tag, maxId - BigInt(count), maxId - 1n);
      return maxId;
    });
  }
}
