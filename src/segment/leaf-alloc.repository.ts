import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LeafAlloc, LeafAllocStore } from './core/leaf-alloc-store';
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
  maxId: bigint;
  step: number;
  description: string | null;
}

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
  constructor(private readonly dataSource: DataSource) {}

  async getAllTags(): Promise<string[]> {
    const rows: Array<{ biz_tag: string }> = await this.dataSource.query('SELECT biz_tag FROM leaf_alloc');
    return rows.map((r) => r.biz_tag);
  }

  updateMaxIdAndGetLeafAlloc(tag: string): Promise<LeafAlloc | null> {
    return this.dataSource.transaction(async (em) => {
      await em.query('UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?', [tag]);
      return this.readAlloc(em, tag);
    });
  }

  /** The UPDATE row-locks the tag, so the SELECT in the same transaction reads this fetch's result. */
  updateMaxIdByCustomStepAndGetLeafAlloc(tag: string, customStep: number): Promise<LeafAlloc | null> {
    return this.dataSource.transaction(async (em) => {
      await em.query('UPDATE leaf_alloc SET max_id = max_id + GREATEST(step, ?) WHERE biz_tag = ?', [customStep, tag]);
      return this.readAlloc(em, tag);
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

  /** Inserts the tag unless a row exists; returns whether it inserted. */
  async insert(alloc: NewLeafAlloc): Promise<boolean> {
    const result: { affectedRows: number } = await this.dataSource.query(
      'INSERT IGNORE INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?)',
      [alloc.tag, alloc.maxId.toString(), alloc.step, alloc.description],
    );
    return Number(result.affectedRows) === 1;
  }

  async update(tag: string, patch: LeafAllocPatch): Promise<LeafAllocRow | null> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (patch.step !== undefined) {
      sets.push('step = ?');
      values.push(patch.step);
    }
    if (patch.description !== undefined) {
      sets.push('description = ?');
      values.push(patch.description);
    }
    if (sets.length > 0) {
      await this.dataSource.query(`UPDATE leaf_alloc SET ${sets.join(', ')} WHERE biz_tag = ?`, [...values, tag]);
    }
    return this.find(tag);
  }

  async delete(tag: string): Promise<boolean> {
    const result: { affectedRows: number } = await this.dataSource.query('DELETE FROM leaf_alloc WHERE biz_tag = ?', [
      tag,
    ]);
    return Number(result.affectedRows) > 0;
  }

  private async readAlloc(em: EntityManager, tag: string): Promise<LeafAlloc | null> {
    const rows: AllocRow[] = await em.query('SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?', [tag]);
    const row = rows[0];
    return row ? { key: row.biz_tag, maxId: BigInt(row.max_id), step: Number(row.step) } : null;
  }
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
