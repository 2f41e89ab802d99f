import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { lengthsOf } from '../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { AllocNumbers, AllocRowReader, SHARD_SLOTS, shardSlot } from './core/alloc-row-reader';
import { SHARD_COUNT } from './core/queue-id-layout';
import { AppRegistry } from './core/app-registry';
import { QueueKeys } from './core/queue-keys';
import { RefillAhead } from './core/refill-ahead';
import { PushRefusal, RefillMonitor, RefillOutcome, RefillTrigger } from './refill-monitor';

export type { PushRefusal, RefillOutcome, RefillTrigger } from './refill-monitor';

/** One app shard as a read of the queue's state sees it. */
export interface QueueShardState {
  app: number;
  shard: number;
  /** Indexes queued in its Redis list; null when the LLEN failed. */
  queueLength: number | null;
  /** IDs this instance's next refill of the shard takes; null when the shard is not in this instance's registry. */
  refillSize: number | null;
  /** Its id_alloc row as numbers (exact: indexes have 49 bits); null when not read (MySQL failed, or no row yet). */
  alloc: AllocNumbers | null;
}

/** One read of the queue's state: every shard of id_alloc and of this instance's registry. */
export interface QueueState {
  /** When the reads finished (ms since the epoch). */
  at: number;
  /** Whether the SELECT of id_alloc succeeded, and every LLEN. */
  mysql: boolean;
  redis: boolean;
  /** In (app, shard) order. */
  shards: QueueShardState[];
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
 * 16,384 rows at 256 apps, in pages of ROWS_PER_SELECT) and one LLEN sweep over the lists of both id_alloc and the
 * registry (each key once), with a turn of the event loop between the steps. Shards are kept by
 * slot (already in (app, shard) order, no sort) and rows read as numbers (AllocRowReader, no
 * bigint per row); rows outside the ID layout (an app above 255, a shard above 63: no queue
 * shard) are left out.
 */
@Injectable()
export class QueueStateReader extends QueueStatePort {
  private readonly rows = new AllocRowReader();

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
    const bySlot = new Array<QueueShardState | undefined>(SHARD_SLOTS);
    const shardAt = (slot: number, app: number, shard: number): QueueShardState => {
      let s = bySlot[slot];
      if (s === undefined) {
        s = { app, shard, queueLength: null, refillSize: null, alloc: null };
        bySlot[slot] = s;
      }
      return s;
    };
    for (const app of this.registry.all()) {
      for (const [shard, config] of app.shards) {
        const slot = shardSlot(app.appId, shard);
        if (slot >= 0) {
          shardAt(slot, app.appId, shard).refillSize = this.ahead.currentSize(app.appId, shard, config.step);
        }
      }
    }
    const allocs = await this.readAllocs();
    const mysql = allocs !== null;
    allocs?.forEach((alloc, slot) => {
      if (alloc !== undefined) {
        const appId = Math.floor(slot / SHARD_COUNT);
        shardAt(slot, appId, slot - appId * SHARD_COUNT).alloc = alloc;
      }
    });
    await nextTurn();
    const shards: QueueShardState[] = [];
    for (const s of bySlot) {
      if (s !== undefined) {
        shards.push(s);
      }
    }
    const lengths = await lengthsOf(this.redis, shards.map((s) => this.keys.list(s.app, s.shard))).catch(
      (err: unknown): Array<[Error | null, number]> => {
        const error = err instanceof Error ? err : new Error(String(err));
        return shards.map(() => [error, 0]);
      },
    );
    let redis = true;
    shards.forEach((s, i) => {
      const [err, length] = lengths[i];
      if (err) {
        redis = false;
      } else {
        s.queueLength = length;
      }
    });
    return { at: Date.now(), mysql, redis, shards };
  }

  /**
   * Every id_alloc row of a queue shard as numbers, by slot, in pages of ROWS_PER_SELECT in key
   * order (a range of the primary key each): each page is parsed and read in one turn of the event
   * loop, where one SELECT of 16,384 rows held it for tens of ms. null when a SELECT failed.
   */
  private async readAllocs(): Promise<Array<AllocNumbers | undefined> | null> {
    const allocs = new Array<AllocNumbers | undefined>(SHARD_SLOTS);
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
            allocs[slot] = this.rows.read(slot, r.max_id, r.max_limit_id);
          }
        }
        if (rows.length < ROWS_PER_SELECT) {
          return allocs;
        }
        after = rows[rows.length - 1];
      }
    } catch {
      return null;
    }
  }
}
