import { ShardObservation } from './core/capacity-forecast';
import { ShardCapacity, appCapacity, shardCapacity } from '../queue-id/core/shard-capacity';
import { QueueKeys } from '../queue-id/core/queue-keys';
import { AppRegistry } from '../queue-id/core/app-registry';
import { IdAllocRepository, IdAllocRow } from '../queue-id/id-alloc.repository';
import { lengthsOf } from '../infra/redis/redis-key-ops';
import { RedisClient } from '../infra/redis/redis.tokens';
import { SegmentBufferView } from '../segment/core/segment-buffer';

export interface StateSources {
  redis: RedisClient;
  keys: QueueKeys;
  registry: AppRegistry;
  repo: IdAllocRepository;
  /** This instance's current refill size of a shard (RefillAhead.currentSize). */
  refillSize: (appId: number, shardId: number, step: number) => number;
  /** Each segment tag's buffers (none when segment mode is off). */
  segment: () => SegmentBufferView[];
  snowflake: () => SnowflakeState;
}

export interface SnowflakeState {
  mode: string;
  workerId: number | null;
  serving: boolean;
}

/** One shard as the state read sees it: the capacity forecast's observation. */
export type ShardState = ShardObservation;

/** Everything the state gauges show, read in one go. */
export interface StateSnapshot {
  /** When the reads finished (ms since the epoch). */
  at: number;
  /**
   * Whether this read reached MySQL (the SELECT of id_alloc) and Redis (every LLEN). A failed
   * read leaves its gauges empty instead of failing the scrape, so the counters are still
   * scraped during an outage.
   */
  backends: { mysql: boolean; redis: boolean };
  /** Lists of the registry's shards whose LLEN succeeded. */
  queueLengths: Array<{ app: number; shard: number; length: number }>;
  /** This instance's current refill size of each shard of the registry. */
  refillSizes: Array<{ app: number; shard: number; size: number }>;
  /** IDs each app of id_alloc can still hand out (queued + not yet allocated). */
  remaining: Array<{ app: number; left: bigint }>;
  /** Each id_alloc row whose LLEN succeeded: its max_id, list length and remaining capacity. */
  shards: ShardState[];
  segment: SegmentBufferView[];
  snowflake: SnowflakeState;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * One read of the state behind the gauges: one SELECT of id_alloc and one LLEN sweep over the
 * lists of both the registry and id_alloc (each key once). A failing MySQL or Redis is reported
 * in `backends` (what it would have given is left out), not thrown.
 */
export async function readStateSnapshot(src: StateSources): Promise<StateSnapshot> {
  const targets = src.registry
    .all()
    .flatMap((app) => [...app.shards].map(([shard, config]) => ({ app: app.appId, shard, step: config.step })));
  let rows: IdAllocRow[] = [];
  let mysql = true;
  try {
    rows = await src.repo.findAll();
  } catch {
    mysql = false;
  }
  // Turns of the event loop between the steps of a large read (16,384 shards at 256 apps: the
  // rows' hydration, then ~10 ms here), so a scrape does not hold requests for their sum.
  await nextTurn();
  const keys = new Map<string, number>();
  const indexOf = (app: number, shard: number): number => {
    const key = src.keys.list(app, shard);
    let i = keys.get(key);
    if (i === undefined) {
      i = keys.size;
      keys.set(key, i);
    }
    return i;
  };
  const targetIndex = targets.map((t) => indexOf(t.app, t.shard));
  const rowIndex = rows.map((r) => indexOf(r.appId, r.shardId));
  await nextTurn();
  const lengths = await lengthsOf(src.redis, [...keys.keys()]).catch((err: unknown): Array<[Error | null, number]> => {
    const error = err instanceof Error ? err : new Error(String(err));
    return [...keys.keys()].map(() => [error, 0]);
  });

  await nextTurn();
  const queueLengths: StateSnapshot['queueLengths'] = [];
  targets.forEach((t, i) => {
    const [err, length] = lengths[targetIndex[i]];
    if (!err) {
      queueLengths.push({ app: t.app, shard: t.shard, length });
    }
  });
  const perApp = new Map<number, ShardCapacity[]>();
  const shards: ShardState[] = [];
  rows.forEach((r, i) => {
    const [err, length] = lengths[rowIndex[i]];
    const capacity = shardCapacity(r, length);
    const ofApp = perApp.get(r.appId) ?? [];
    ofApp.push(capacity);
    perApp.set(r.appId, ofApp);
    if (!err) {
      shards.push({ app: r.appId, shard: r.shardId, maxId: r.maxId, maxLimitId: r.maxLimitId, queueLength: length, remaining: capacity.remaining });
    }
  });
  return {
    at: Date.now(),
    backends: { mysql, redis: lengths.every(([err]) => !err) },
    queueLengths,
    refillSizes: targets.map((t) => ({ app: t.app, shard: t.shard, size: src.refillSize(t.app, t.shard, t.step) })),
    remaining: [...perApp].map(([app, ofApp]) => ({ app, left: appCapacity(ofApp).remaining })),
    shards,
    segment: src.segment(),
    snowflake: src.snowflake(),
  };
}
