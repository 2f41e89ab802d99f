import { MAX_APP_ID, SHARD_COUNT, maxIndexFor } from './queue-id-layout';

/** One slot per (app, shard): appId * SHARD_COUNT + shardId (16,384). */
export const SHARD_SLOTS = (MAX_APP_ID + 1) * SHARD_COUNT;

/** The slot of (appId, shardId), or -1 when either is outside the layout (not a queue shard). */
export function shardSlot(appId: number, shardId: number): number {
  return Number.isInteger(appId) && Number.isInteger(shardId) && appId >= 0 && appId <= MAX_APP_ID && shardId >= 0 && shardId < SHARD_COUNT
    ? appId * SHARD_COUNT + shardId
    : -1;
}

/** An id_alloc row's space as numbers: exact, since an index has 49 bits. */
export interface AllocNumbers {
  /** max_id: the next index to allocate (above 2^53, which the service never writes, rounded). */
  maxId: number;
  /** The largest index the shard may hand out (maxIndexFor; -1 when even index 0 is above max_limit_id). */
  maxIndex: number;
  /** Indexes not yet allocated: shardCapacity's `unallocated`, in numbers. */
  unallocated: number;
}

/**
 * Reads id_alloc rows (max_id and max_limit_id as the decimal strings MySQL returns) as numbers,
 * for reads of every shard at once (the metrics' state read: 16,384 rows at 256 apps), without a
 * bigint per row: max_limit_id only changes by hand, so each slot keeps the last text it saw and
 * its maxIndex, and computes maxIndexFor again only when the text changes. The same rule as
 * shardCapacity (refill-policy's `unallocated`): max(0, maxIndex − max_id). Framework-free.
 */
export class AllocRowReader {
  private readonly limitTexts: Array<string | undefined> = new Array<string | undefined>(SHARD_SLOTS);
  private readonly maxIndexes = new Float64Array(SHARD_SLOTS);

  /** The row of `slot` (shardSlot of its app and shard, not -1). */
  read(slot: number, maxIdText: string, maxLimitIdText: string): AllocNumbers {
    const maxId = Number(maxIdText);
    const maxIndex = this.maxIndexOf(slot, maxLimitIdText);
    return { maxId, maxIndex, unallocated: maxIndex > maxId ? maxIndex - maxId : 0 };
  }

  private maxIndexOf(slot: number, maxLimitIdText: string): number {
    if (this.limitTexts[slot] !== maxLimitIdText) {
      const appId = Math.floor(slot / SHARD_COUNT);
      this.maxIndexes[slot] = Number(maxIndexFor(appId, slot - appId * SHARD_COUNT, BigInt(maxLimitIdText)));
      this.limitTexts[slot] = maxLimitIdText;
    }
    return this.maxIndexes[slot];
  }
}
