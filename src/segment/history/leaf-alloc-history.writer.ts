import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { MissingRecheck } from '../../infra/database/missing-recheck';
import { ER_NO_SUCH_TABLE, errnoOf } from '../../infra/database/mysql-errors';

/**
 * Records a range a tag handed out in `leaf_alloc_history`, inside the caller's transaction (a
 * segment fetch or a lease sent statement by statement), so the range and its time commit
 * together. Without the table (a database made by Leaf's DDL, migrations not run) nothing is
 * recorded and the allocation goes on: a failed statement does not end a MySQL transaction. The
 * table is looked for again a minute later (migrations may run meanwhile). INSERT IGNORE: a row
 * already there (a leaf_alloc edited by hand) never fails an allocation.
 */
@Injectable()
export class LeafAllocHistoryWriter {
  private readonly logger = new Logger(LeafAllocHistoryWriter.name);
  private readonly table = new MissingRecheck();

  async record(em: EntityManager, tag: string, from: bigint, to: bigint): Promise<void> {
    if (to < from || !this.table.shouldTry()) {
      return;
    }
    try {
      await em.query(
        'INSERT IGNORE INTO leaf_alloc_history (biz_tag, from_id, to_id, allocated_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))',
        [tag, from.toString(), to.toString()],
      );
    } catch (err) {
      if (errnoOf(err) !== ER_NO_SUCH_TABLE) {
        throw err;
      }
      if (this.table.markMissing()) {
        this.logger.warn('table leaf_alloc_history is missing (migrations not run?): segment allocations are not recorded; looked for again every minute');
      }
      return;
    }
    if (this.table.markPresent()) {
      this.logger.log('table leaf_alloc_history is there again: segment allocations are recorded');
    }
  }
}
