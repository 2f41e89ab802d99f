import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { setClause } from '../infra/database/set-clause';
import { LeafAlloc, LeafAllocStore } from './core/leaf-alloc-store';
import { LeafAllocHistoryWriter } from './history/leaf-alloc-history.writer';
import { LeafAllocCall, LeafAllocProcedure } from './history/leaf-alloc-procedure';
import { LeafAllocEntity } from './leaf-alloc.entity';

export interface LeafAllocRow {
  tag: string;
  maxId: bigint;
  step: number;
  description: string | null;
  updateTime: Date;
}

export interface NewLeafAlloc {
  tag: string;
  /** Null when the request gave none: 1 for a new tag, the retired `max_id` for a deleted one. */
  maxId: bigint | null;
  step: number;
  description: string | null;
}

/** What a create did: inserted the row, found it there already, or refused a maxId below a retired tag's. */
export type CreateOutcome =
  | { kind: 'created'; resumedFrom: bigint | null }
  | { kind: 'exists' }
  | { kind: 'below-retired'; retiredMaxId: bigint };

export interface LeafAllocPatch {
  step?: number;
  description?: string | null;
}

interface AllocRow {
  biz_tag: string;
  max_id: string;
  step: number | string;
}

/**
 * Data access to `leaf_alloc`: Leaf's IDAllocDao for the generator, plus the admin's narrow
 * reads and writes. Every BIGINT converted with BigInt(), never Number().
 */
@Injectable()
export class LeafAllocRepository implements LeafAllocStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly history: LeafAllocHistoryWriter,
    private readonly procedure: LeafAllocProcedure,
  ) {}

  async getAllTags(): Promise<string[]> {
    const rows: Array<{ biz_tag: string }> = await this.dataSource.query('SELECT biz_tag FROM leaf_alloc');
    return rows.map((r) => r.biz_tag);
  }

  /**
   * `max_id = max_id + step`. One round trip (`shardleaf_leaf_alloc_next`, which also records the
   * range in leaf_alloc_history); without the procedure, the same transaction statement by statement.
   */
  async updateMaxIdAndGetLeafAlloc(tag: string): Promise<LeafAlloc | null> {
    const called = await this.procedure.call(tag, 'step', 0);
    if (called !== null) {
      return allocOf(called);
    }
    return this.dataSource.transaction(async (em) => {
      await em.query('UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?', [tag]);
      const alloc = await this.readAlloc(em, tag);
      if (alloc) {
        await this.recordFetch(em, alloc, alloc.step);
      }
      return alloc;
    });
  }

  /** `max_id = max_id + GREATEST(step, customStep)`, as updateMaxIdAndGetLeafAlloc. */
  async updateMaxIdByCustomStepAndGetLeafAlloc(tag: string, customStep: number): Promise<LeafAlloc | null> {
    const called = await this.procedure.call(tag, 'at-least', customStep);
    if (called !== null) {
      return allocOf(called);
    }
    // The UPDATE row-locks the tag, so the SELECT in the same transaction reads this fetch's result.
    return this.dataSource.transaction(async (em) => {
      await em.query('UPDATE leaf_alloc SET max_id = max_id + GREATEST(step, ?) WHERE biz_tag = ?', [customStep, tag]);
      const alloc = await this.readAlloc(em, tag);
      if (alloc) {
        await this.recordFetch(em, alloc, Math.max(alloc.step, customStep));
      }
      return alloc;
    });
  }

  async findAll(): Promise<LeafAllocRow[]> {
    const rows = await this.dataSource.getRepository(LeafAllocEntity).find({ order: { bizTag: 'ASC' } });
    return rows.map(toRow);
  }

  async find(tag: string): Promise<LeafAllocRow | null> {
    const row = await this.dataSource.getRepository(LeafAllocEntity).findOne({ where: { bizTag: tag } });
    return row ? toRow(row) : null;
  }

  /**
   * Inserts the tag unless a row exists, in one transaction that honours `leaf_alloc_retired`: a
   * tag deleted before resumes at its retired `max_id` (maxId null), and an explicit maxId below
   * it is refused (nothing written). The INSERT comes first: once it succeeds this transaction
   * holds the new row's lock, and any delete of the tag committed its tombstone before (a delete
   * writes the tombstone while holding the old row's lock), so the locking read below sees it.
   */
  async create(alloc: NewLeafAlloc): Promise<CreateOutcome> {
    try {
      return await this.dataSource.transaction(async (em): Promise<CreateOutcome> => {
        const inserted: { affectedRows: number } = await em.query(
          'INSERT IGNORE INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?)',
          [alloc.tag, (alloc.maxId ?? 1n).toString(), alloc.step, alloc.description],
        );
        if (Number(inserted.affectedRows) !== 1) {
          return { kind: 'exists' };
        }
        const retired = await this.lockRetired(em, alloc.tag);
        if (retired === null) {
          return { kind: 'created', resumedFrom: null };
        }
        if (alloc.maxId !== null) {
          if (alloc.maxId < retired) {
            throw new BelowRetired(retired);
          }
          return { kind: 'created', resumedFrom: null };
        }
        await em.query('UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ?', [retired.toString(), alloc.tag]);
        return { kind: 'created', resumedFrom: retired };
      });
    } catch (err) {
      if (err instanceof BelowRetired) {
        return { kind: 'below-retired', retiredMaxId: err.retiredMaxId };
      }
      throw err;
    }
  }

  /** The highest `max_id` the tag had when deleted through the admin API, or null. */
  async retiredMaxId(tag: string): Promise<bigint | null> {
    const rows: Array<{ max_id: string }> = await this.dataSource.query(
      'SELECT max_id FROM leaf_alloc_retired WHERE biz_tag = ?',
      [tag],
    );
    return rows[0] ? BigInt(rows[0].max_id) : null;
  }

  async update(tag: string, patch: LeafAllocPatch): Promise<LeafAllocRow | null> {
    const set = setClause({ step: patch.step, description: patch.description });
    if (set.sql !== '') {
      await this.dataSource.query(`UPDATE leaf_alloc SET ${set.sql} WHERE biz_tag = ?`, [...set.values, tag]);
    }
    return this.find(tag);
  }

  /**
   * Deletes the row and records its `max_id` in `leaf_alloc_retired` (the higher of this and any
   * earlier one), in one transaction holding the row's lock: a segment fetch of another instance
   * either committed before (its range is below the recorded max_id) or finds no row after.
   * Returns the recorded max_id, or null when there was no row (nothing written).
   */
  delete(tag: string): Promise<bigint | null> {
    return this.dataSource.transaction(async (em) => {
      const rows: Array<{ max_id: string }> = await em.query(
        'SELECT max_id FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE',
        [tag],
      );
      if (!rows[0]) {
        return null;
      }
      await em.query(
        'INSERT INTO leaf_alloc_retired (biz_tag, max_id, deleted_at) VALUES (?, ?, CURRENT_TIMESTAMP) ' +
          'ON DUPLICATE KEY UPDATE max_id = GREATEST(max_id, VALUES(max_id)), deleted_at = VALUES(deleted_at)',
        [tag, rows[0].max_id],
      );
      await em.query('DELETE FROM leaf_alloc WHERE biz_tag = ?', [tag]);
      return (await this.lockRetired(em, tag)) ?? BigInt(rows[0].max_id);
    });
  }

  /** A locking read: the latest committed tombstone, whatever the transaction's snapshot. */
  private async lockRetired(em: EntityManager, tag: string): Promise<bigint | null> {
    const rows: Array<{ max_id: string }> = await em.query(
      'SELECT max_id FROM leaf_alloc_retired WHERE biz_tag = ? FOR UPDATE',
      [tag],
    );
    return rows[0] ? BigInt(rows[0].max_id) : null;
  }

  /** Leaf's range rule: a fetch that moved max_id up by `step` owns max_id - step .. max_id - 1 (IDs from 1). */
  private recordFetch(em: EntityManager, alloc: LeafAlloc, step: number): Promise<void> {
    const from = alloc.maxId - BigInt(step);
    return this.history.record(em, alloc.key, from < 1n ? 1n : from, alloc.maxId - 1n);
  }

  private async readAlloc(em: EntityManager, tag: string): Promise<LeafAlloc | null> {
    const rows: AllocRow[] = await em.query('SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?', [tag]);
    const row = rows[0];
    return row ? { key: row.biz_tag, maxId: BigInt(row.max_id), step: Number(row.step) } : null;
  }
}

/** Thrown inside the create transaction to roll it back. */
class BelowRetired extends Error {
  constructor(readonly retiredMaxId: bigint) {
    super(`below the retired max_id ${retiredMaxId}`);
  }
}

function allocOf(called: LeafAllocCall): LeafAlloc | null {
  if (called.kind === 'moved') {
    return { key: called.tag, maxId: called.maxId, step: called.step };
  }
  if (called.kind === 'no-row') {
    return null;
  }
  throw new Error(`shardleaf_leaf_alloc_next refused a fetch (max_id ${called.maxId})`);
}

function toRow(e: LeafAllocEntity): LeafAllocRow {
  return {
    tag: e.bizTag,
    maxId: BigInt(e.maxId),
    step: Number(e.step),
    description: e.description,
    updateTime: e.updateTime,
  };
}
