import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { forEachLength } from '../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { AppRegistry } from './core/app-registry';
import { QueueKeys } from './core/queue-keys';
import { SHARD_COUNT } from './core/queue-id-layout';
import { RefillAhead } from './core/refill-ahead';
import { MaxIndexes, SHARD_SLOTS, ShardSlots, emptyShardSlots, shardSlot, unallocatedIndexes } from './core/shard-slots';
import { PushRefusal, RefillMonitor, RefillOutcome, RefillTrigger } from './refill-monitor';

export type { PushRefusal, RefillOutcome, RefillTrigger } from './refill-monitor';
export type { ShardSlots } from './core/shard-slots';

/** One read of the queue's state: every shard of id_alloc and of this instance's registry. */
export interface QueueState {
  /** When the reads finished (ms since the epoch). */
  at: number;
  /** Whether the SELECT of id_alloc succeeded, and every LLEN. */
  mysql: boolean;
  redis: boolean;
  /** Every shard of id_alloc and of this instance's registry, by slot ((app, shard) order). */
  shards: ShardSlots;
}

export type RefillListener = (trigger: RefillTrigger, outcome: RefillOutcome, seconds: number) => void;

/**
 * What the queue feature lets others (metrics, the dashboard) read of its state: the one way in,
 * so its keys, registry, repository and capacity rules stay its own.
 */
export abstract class QueueStatePort {
  /** Reads id_alloc and every list's length (uncached: callers cache). Backend failures are reported, not thrown. */
  abstract read(): Promise<QueueState>;
  /** Finished refills of this instance; returns the unsubscribe function. */
  abstract onRefill(listener: RefillListener): () => void;
  /** Segments refused by their list's push marker on this instance; returns the unsubscribe function. */
  abstract onRefusal(listener: (reason: PushRefusal) => void): () => void;
}

interface AllocRow {
  app_id: number | string;
  shard_id: number | string;
  max_id: string;
  max_limit_id: string;
}

/** Rows per SELECT of id_alloc in a state read (16 apps of 64 shards). */
const ROWS_PER_SELECT = 1024;
const SELECT_ALLOC = 'SELECT app_id, shard_id, CAST(max_id AS CHAR) AS max_id, CAST(max_limit_id AS CHAR) AS max_limit_id FROM id_alloc';
const PAGE = `ORDER BY app_id, shard_id LIMIT ${ROWS_PER_SELECT}`;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The port over MySQL and Redis: plain SELECTs of id_alloc's four columns (no entity hydration:
 * 16,384 rows at 256 apps, in pages of ROWS_PER_SELECT) and one LLEN sweep over the lists of both
 * id_alloc and the registry (each key once), with a turn of the event loop between the steps.
 * The state is kept by slot in typed arrays (ShardSlots, in (app, shard) order) and rows are read
 * as numbers (MaxIndexes, no bigint per row), so a read allocates nothing per shard but mysql2's
 * rows of one page; the list names are made once per slot. Rows outside the ID layout (an app
 * above 255, a shard above 63: no queue shard) are left out.
 */
@Injectable()
export class QueueStateReader extends QueueStatePort {
  private readonly maxIndexes = new MaxIndexes();
  /** The list name of each slot, made on first use. */
  private readonly listNames = new Array<string | undefined>(SHARD_SLOTS);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: QueueKeys,
    private readonly registry: AppRegistry,
    private readonly ahead: RefillAhead,
    private readonly monitor: RefillMonitor,
  ) {
    super();
  }

  onRefill(listener: RefillListener): () => void {
    return this.monitor.subscribe(listener);
  }

  onRefusal(listener: (reason: PushRefusal) => void): () => void {
    return this.monitor.subscribeRefusals(listener);
  }

  async read(): Promise<QueueState> {
    const shards = emptyShardSlots();
    for (const app of this.registry.all()) {
      for (const [shard, config] of app.shards) {
        const slot = shardSlot(app.appId, shard);
        if (slot >= 0) {
          shards.present[slot] = 1;
          shards.refillSize[slot] = this.ahead.currentSize(app.appId, shard, config.step);
        }
      }
    }
    const mysql = await this.readAllocs(shards);
    await nextTurn();
    const slots: number[] = [];
    const names: string[] = [];
    for (let slot = 0; slot < SHARD_SLOTS; slot++) {
      if (shards.present[slot] === 1) {
        slots.push(slot);
        names.push(this.listName(slot));
      }
    }
    let redis = true;
    try {
      await forEachLength(this.redis, names, (i, length) => {
        if (length instanceof Error) {
          redis = false;
        } else {
          shards.queueLength[slots[i]] = length;
        }
      });
    } catch {
      redis = false;
      shards.queueLength.fill(Number.NaN);
    }
    return { at: Date.now(), mysql, redis, shards };
  }

  private listName(slot: number): string {
    const appId = Math.floor(slot / SHARD_COUNT);
    return (this.listNames[slot] ??= this.keys.list(appId, slot - appId * SHARD_COUNT));
  }

  /**
   * Every id_alloc row of a queue shard into `shards`, in pages of ROWS_PER_SELECT in key order (a
   * range of the primary key each): each page is parsed and read in one turn of the event loop,
   * where one SELECT of 16,384 rows held it for tens of ms. false when a SELECT failed: then no
   * row counts (as when one SELECT failed), and a shard of no registry is not in `shards`.
   */
  private async readAllocs(shards: ShardSlots): Promise<boolean> {
    const rowSlots: number[] = [];
    let after: AllocRow | null = null;
    try {
      for (;;) {
        const rows: AllocRow[] = await this.dataSource.query<AllocRow[]>(
          after === null ? `${SELECT_ALLOC} ${PAGE}` : `${SELECT_ALLOC} WHERE app_id > ? OR (app_id = ? AND shard_id > ?) ${PAGE}`,
          after === null ? [] : [after.app_id, after.app_id, after.shard_id],
        );
        for (const r of rows) {
          const slot = shardSlot(Number(r.app_id), Number(r.shard_id));
          if (slot >= 0) {
            const maxId = Number(r.max_id);
            const maxIndex = this.maxIndexes.of(slot, r.max_limit_id);
            shards.maxId[slot] = maxId;
            shards.maxIndex[slot] = maxIndex;
            shards.unallocated[slot] = unallocatedIndexes(maxId, maxIndex);
            rowSlots.push(slot);
          }
        }
        if (rows.length < ROWS_PER_SELECT) {
          break;
        }
        after = rows[rows.length - 1];
      }
    } catch {
      shards.maxId.fill(Number.NaN);
      shards.maxIndex.fill(Number.NaN);
      shards.unallocated.fill(Number.NaN);
      return false;
    }
    for (const slot of rowSlots) {
      shards.present[slot] = 1;
    }
    return true;
  }
}
