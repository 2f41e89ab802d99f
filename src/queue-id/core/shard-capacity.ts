import { maxIndexFor } from './queue-id-layout';
import { unallocated } from './refill-policy';

/** The id_alloc columns that bound a shard's space. */
export interface ShardRow {
  appId: number;
  shardId: number;
  maxId: bigint;
  maxLimitId: bigint;
}

export interface ShardCapacity {
  /** Indexes not yet taken from the DB before max_limit_id (or the 49-bit index range when 0). */
  unallocated: bigint;
  /** IDs the shard can still hand out: queued + unallocated. */
  remaining: bigint;
}

/**
 * The one computation of a shard's remaining capacity, shared by the admin API, the
 * `shardleaf_queue_remaining_capacity` gauge (summed per app by appCapacity) and the capacity
 * forecast. Pure.
 */
export function shardCapacity(row: ShardRow, queueLength: number): ShardCapacity {
  const free = unallocated(row.maxId, maxIndexFor(row.appId, row.shardId, row.maxLimitId));
  return { unallocated: free, remaining: BigInt(queueLength) + free };
}

export interface AppCapacity {
  /** IDs the app can still hand out: the sum over its shards. */
  remaining: bigint;
  /** Shards with nothing left to hand out. */
  exhaustedShards: number;
}

/** An app's capacity from its shards' (the admin API's summary, the remaining-capacity gauge). Pure. */
export function appCapacity(shards: Iterable<ShardCapacity>): AppCapacity {
  let remaining = 0n;
  let exhaustedShards = 0;
  for (const shard of shards) {
    remaining += shard.remaining;
    if (shard.remaining === 0n) {
      exhaustedShards++;
    }
  }
  return { remaining, exhaustedShards };
}
