import { MAX_APP_ID, SHARD_COUNT, maxIndexFor } from './queue-id-layout';

/** One slot per (app, shard): appId * SHARD_COUNT + shardId (16,384). */
export const SHARD_SLOTS = (MAX_APP_ID + 1) * SHARD_COUNT;

/** The slot of (appId, shardId), or -1 when either is outside the layout (not a queue shard). */
export function shardSlot(appId: number, shardId: number): number {
  return Number.isInteger(appId) && Number.isInteger(shardId) && appId >= 0 && appId <= MAX_APP_ID && shardId >= 0 && shardId < SHARD_COUNT
    ? appId * SHARD_COUNT + shardId
    : -1;
}

/**
 * One read of every shard's state, by slot: one typed array per field instead of an object per
 * shard (16,384 at 256 apps), so a read that spans many turns of the event loop leaves nothing
 * per shard for the garbage collector to copy or promote. NaN: not known.
 */
export interface ShardSlots {
  /** Slots per app: slot = app * slotsPerApp + shard. */
  readonly slotsPerApp: number;
  /** 1 for a shard of id_alloc or of this instance's registry, else 0. */
  readonly present: Uint8Array;
  /** Indexes queued in its Redis list; NaN when its LLEN failed. */
  readonly queueLength: Float64Array;
  /** IDs this instance's next refill of it takes; NaN when it is not in this instance's registry. */
  readonly refillSize: Float64Array;
  /** id_alloc's max_id (the next index to allocate; exact: indexes have 49 bits); NaN when its row was not read. */
  readonly maxId: Float64Array;
  /** The largest index it may hand out (maxIndexFor; -1 when even index 0 is above max_limit_id); NaN with maxId. */
  readonly maxIndex: Float64Array;
  /** Indexes not yet allocated: shardCapacity's `unallocated`, as a number; NaN with maxId. */
  readonly unallocated: Float64Array;
}

/** Every slot absent, every value NaN. */
export function emptyShardSlots(): ShardSlots {
  const column = (): Float64Array => new Float64Array(SHARD_SLOTS).fill(Number.NaN);
  return {
    slotsPerApp: SHARD_COUNT,
    present: new Uint8Array(SHARD_SLOTS),
    queueLength: column(),
    refillSize: column(),
    maxId: column(),
    maxIndex: column(),
    unallocated: column(),
  };
}

/** shardCapacity's unallocated (refill-policy's `unallocated`) in numbers: max(0, maxIndex − maxId). */
export function unallocatedIndexes(maxId: number, maxIndex: number): number {
  return maxIndex > maxId ? maxIndex - maxId : 0;
}

/**
 * maxIndexFor of every slot, read again and again (the metrics' state read: 16,384 rows at 256
 * apps), without a bigint per row and read: max_limit_id only changes by hand, so each slot keeps
 * the last text it saw (MySQL's decimal string) and its maxIndex, and computes maxIndexFor again
 * only when the text changes. Framework-free.
 */
export class MaxIndexes {
  private readonly limitTexts = new Array<string | undefined>(SHARD_SLOTS);
  private readonly maxIndexes = new Float64Array(SHARD_SLOTS);

  /** The maxIndex of `slot` (shardSlot of its app and shard, not -1) under max_limit_id `maxLimitIdText`. */
  of(slot: number, maxLimitIdText: string): number {
    if (this.limitTexts[slot] !== maxLimitIdText) {
      const appId = Math.floor(slot / SHARD_COUNT);
      this.maxIndexes[slot] = Number(maxIndexFor(appId, slot - appId * SHARD_COUNT, BigInt(maxLimitIdText)));
      this.limitTexts[slot] = maxLimitIdText;
    }
    return this.maxIndexes[slot];
  }
}
