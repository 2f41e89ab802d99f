import { maxIndexFor } from '../../../src/queue-id/core/queue-id-layout';
import { planSegment } from '../../../src/queue-id/core/refill-policy';
import {
  AllocationResult,
  AppPatch,
  IdAllocRepository,
  IdAllocRow,
  NewApp,
  RetiredShard,
  ShardRow,
} from '../../../src/queue-id/id-alloc.repository';

/** The IdAllocRepository methods the queue services use. */
export type IdAllocPort = Pick<
  IdAllocRepository,
  'allocate' | 'advancePast' | 'findAll' | 'findShards' | 'findApp' | 'createApp' | 'updateApp' | 'retireApp' | 'findRetired' | 'findRetiredWithoutRow'
>;

const shardKey = (appId: number, shardId: number): string => `${appId}/${shardId}`;
const byShard = <T extends { appId: number; shardId: number }>(a: T, b: T): number =>
  a.appId - b.appId || a.shardId - b.shardId;

/**
 * `id_alloc` and `id_alloc_retired` in memory, with the repository's SQL semantics: an allocation
 * advances the row's max_id by whole steps (planSegment, cut at max_limit_id) atomically, so two
 * allocations never overlap; a create inserts the missing shard rows, each starting at its
 * tombstone; a delete moves max_id into the tombstone (never lowering it) and deletes the rows.
 *
 * Test controls: `holdAllocations()` makes the next allocations wait (before the row update)
 * until `releaseAllocations()`; `fail` makes every call throw (MySQL down).
 */
export class FakeIdAlloc implements IdAllocPort {
  private readonly rows = new Map<string, IdAllocRow>();
  private readonly tombstones = new Map<string, RetiredShard>();
  /** Every allocation that got a segment, in commit order. */
  readonly allocations: Array<{ appId: number; shardId: number; from: bigint; to: bigint }> = [];
  fail: Error | null = null;
  private gate: { promise: Promise<void>; open: () => void } | null = null;
  private readonly at = new Date('2025-01-01T00:00:00.000Z');

  /** The row of one shard (a copy), or undefined. */
  row(appId: number, shardId: number): IdAllocRow | undefined {
    const row = this.rows.get(shardKey(appId, shardId));
    return row ? { ...row } : undefined;
  }

  /** Sets a row's max_id by hand (a database restored from an older backup). */
  setMaxId(appId: number, shardId: number, maxId: bigint): void {
    const row = this.rows.get(shardKey(appId, shardId));
    if (!row) {
      throw new Error(`no row ${appId}/${shardId}`);
    }
    row.maxId = maxId;
  }

  holdAllocations(): void {
    let open = (): void => undefined;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { promise, open };
  }

  releaseAllocations(): void {
    const held = this.gate;
    this.gate = null;
    held?.open();
  }

  async allocate(appId: number, shardId: number, minWanted: number): Promise<AllocationResult | null> {
    if (this.gate) {
      await this.gate.promise;
    }
    this.check();
    const row = this.rows.get(shardKey(appId, shardId));
    if (!row) {
      return null;
    }
    const maxIndex = maxIndexFor(appId, shardId, row.maxLimitId);
    const segment = planSegment(row.maxId, row.step, maxIndex, minWanted);
    if (segment) {
      row.maxId = segment.to;
      this.allocations.push({ appId, shardId, ...segment });
    }
    return { segment, step: row.step, maxIndex, maxLimitId: row.maxLimitId };
  }

  async advancePast(appId: number, shardId: number, index: bigint): Promise<boolean> {
    this.check();
    const row = this.rows.get(shardKey(appId, shardId));
    if (!row || row.maxId >= index) {
      return false;
    }
    row.maxId = index;
    return true;
  }

  async findShards(): Promise<ShardRow[]> {
    return (await this.findAll()).map(({ appId, appName, shardId, step, maxLimitId }) => ({ appId, appName, shardId, step, maxLimitId }));
  }

  async findAll(): Promise<IdAllocRow[]> {
    this.check();
    return [...this.rows.values()].sort(byShard).map((r) => ({ ...r }));
  }

  async findApp(appId: number): Promise<IdAllocRow[]> {
    return (await this.findAll()).filter((r) => r.appId === appId);
  }

  async createApp(app: NewApp, shardCount: number): Promise<{ rows: IdAllocRow[]; inserted: number; resumed: RetiredShard[] }> {
    this.check();
    const retired = await this.findRetired(app.appId);
    let inserted = 0;
    for (let shardId = 0; shardId < shardCount; shardId++) {
      const key = shardKey(app.appId, shardId);
      if (this.rows.has(key)) {
        continue;
      }
      this.rows.set(key, {
        ...app,
        shardId,
        maxId: this.tombstones.get(key)?.maxId ?? 0n,
        createTime: this.at,
        updateTime: this.at,
      });
      inserted++;
    }
    return { rows: await this.findApp(app.appId), inserted, resumed: retired.filter((r) => r.maxId > 0n) };
  }

  async updateApp(appId: number, patch: AppPatch): Promise<IdAllocRow[]> {
    this.check();
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as AppPatch;
    for (const row of this.rows.values()) {
      if (row.appId === appId) {
        Object.assign(row, defined);
      }
    }
    return this.findApp(appId);
  }

  async retireApp(appId: number): Promise<{ deletedRows: number; retired: RetiredShard[] }> {
    this.check();
    let deletedRows = 0;
    for (const [key, row] of this.rows) {
      if (row.appId !== appId) {
        continue;
      }
      const before = this.tombstones.get(key)?.maxId ?? -1n;
      this.tombstones.set(key, { appId, shardId: row.shardId, maxId: row.maxId > before ? row.maxId : before });
      this.rows.delete(key);
      deletedRows++;
    }
    return { deletedRows, retired: await this.findRetired(appId) };
  }

  async findRetired(appId: number): Promise<RetiredShard[]> {
    this.check();
    return [...this.tombstones.values()].filter((r) => r.appId === appId).sort(byShard).map((r) => ({ ...r }));
  }

  async findRetiredWithoutRow(): Promise<RetiredShard[]> {
    this.check();
    return [...this.tombstones.entries()]
      .filter(([key]) => !this.rows.has(key))
      .map(([, r]) => ({ ...r }))
      .sort(byShard);
  }

  private check(): void {
    if (this.fail) {
      throw this.fail;
    }
  }
}
