import { Injectable } from '@nestjs/common';
import { QueueLists } from '../core/queue-lists';
import { ShardRef } from '../core/shard-ref';
import { SingleFlight } from '../core/single-flight';
import { SegmentAllocation } from './segment-allocation';
import { QueueLocks } from '../queue-locks';

export interface TakeResult {
  /**
   * `refused`: the segments allocated were refused by the list's marker (a gap), or the list held
   * too few after this instance's own refill of the shard without the lock; try again.
   * `limited`: the segment was refused by the shard's stored limit (a gap); not allocated again.
   */
  status: 'taken' | 'exhausted' | 'missing' | 'refused' | 'limited';
  /**
   * Indexes now owned by the caller, as decimal digits: popped from the list (bytes) or freshly
   * allocated (strings). Read with core/queue-batch.ts's acceptEntries.
   */
  indexes: Array<string | Uint8Array>;
}

/**
 * The on-demand refill of a request that found the list short: under the shard's lock, pop what
 * another instance may have pushed meanwhile, then allocate a segment, keep the `wanted` indexes
 * still missing for this request and push the rest. Taking directly from the new segment means a
 * request that refilled is always served, however many others drain the list concurrently.
 * The whole segment is claimed on the list's marker first (one claim, with the push of the rest),
 * so an index is handed out through a list at most once even when id_alloc is behind the list
 * (a restored database): then the row is moved past the marker and one more segment allocated.
 * If the lock stays busy for QUEUE_DEMAND_LOCK_WAIT_MS the work is done without it (uniqueness
 * rests on the row update), of only what the request lacks (whole steps, not the grown size) and
 * one such refill per shard at a time here: requests meanwhile wait for it and pop what it
 * queued. The over-fill under a busy lock is so at most about a step per instance.
 */
@Injectable()
export class OnDemandTake {
  /** On-demand refills without the lock: one per shard at a time on this instance. */
  private readonly unlocked = new SingleFlight();

  constructor(private readonly lock: QueueLocks, private readonly lists: QueueLists, private readonly segments: SegmentAllocation) {}

  async take(shard: ShardRef, wanted: number): Promise<TakeResult> {
    const outcome = await this.lock.shard(shard, this.lock.demandRetries, () => this.takeOnce(shard, true, wanted));
    if (outcome.acquired) {
      return outcome.value;
    }
    return this.takeUnlocked(shard, wanted, []);
  }

  /**
   * Without the lock, one refill of the shard at a time here: a request that waited for another
   * one pops what it queued and, still short, runs the next (a failed one fails its waiters).
   */
  private takeUnlocked(shard: ShardRef, need: number, got: ReadonlyArray<string | Uint8Array>): Promise<TakeResult> {
    return this.unlocked.run(
      `${shard.appId}/${shard.shardId}`,
      async () => {
        const taken = await this.takeOnce(shard, false, need);
        return { ...taken, indexes: [...got, ...taken.indexes] };
      },
      async () => {
        const more = await this.lists.pop(shard.appId, shard.shardId, need);
        const all = [...got, ...more];
        return more.length >= need ? { status: 'taken', indexes: all } : this.takeUnlocked(shard, need - more.length, all);
      },
    );
  }

  private async takeOnce(shard: ShardRef, adaptive: boolean, wanted: number): Promise<TakeResult> {
    const indexes: Array<string | Uint8Array> = await this.lists.pop(shard.appId, shard.shardId, wanted);
    // A segment refused by the list's marker is moved past once and allocated again.
    for (let attempt = 0; attempt < 2 && indexes.length < wanted; attempt++) {
      const short = wanted - indexes.length;
      // Under the lock a shard whose refills grew takes its grown size (at least what is lacking).
      const size = this.segments.sizeFor(shard, short, adaptive);
      await this.segments.assertUsable(shard);
      const allocation = await this.segments.allocate('demand', shard, size);
      if (!allocation) {
        return { status: 'missing', indexes };
      }
      if (!allocation.segment) {
        return { status: 'exhausted', indexes };
      }
      const { from, to } = allocation.segment;
      const lastTaken = from + BigInt(short) - 1n < to ? from + BigInt(short) - 1n : to;
      // The whole segment is claimed on the list's marker before any of it is handed out: a
      // marker above it means these indexes went through the list before (handed out already).
      const pushed = await this.segments.push(shard, from, to, allocation.maxIndex, lastTaken + 1n);
      if (pushed === 'limited') {
        return { status: 'limited', indexes };
      }
      if (pushed === 'refused') {
        continue;
      }
      this.segments.recordSize(shard, size, adaptive);
      for (let i = from; i <= lastTaken; i++) {
        indexes.push(i.toString());
      }
      // A segment shorter than what was missing was cut at max_limit_id.
      return { status: indexes.length >= wanted ? 'taken' : 'exhausted', indexes };
    }
    return { status: indexes.length >= wanted ? 'taken' : 'refused', indexes };
  }
}
