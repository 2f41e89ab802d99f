import { Injectable, Logger } from '@nestjs/common';
import { QueueLists } from '../core/queue-lists';
import { ShardRef, describeShard } from '../core/shard-ref';
import { RefillTrigger } from '../refill-monitor';
import { SegmentAllocation } from './segment-allocation';
import { QueueLocks } from '../queue-locks';

/** `refused`: both segments allocated were refused by the list's marker (gaps); the list is as it was. */
export type RefillStatus = 'refilled' | 'sufficient' | 'busy' | 'exhausted' | 'missing' | 'refused';

export interface RefillResult {
  status: RefillStatus;
  /** Indexes pushed to the list. */
  pushed: number;
}

export interface RefillRequest {
  /** The refill is skipped when the list already holds at least this many indexes. */
  skipIfAtLeast: number;
  /** Allocate enough whole steps for this many indexes (on-demand batch requests). */
  minWanted: number;
  /** Attempts to wait for the lock when another instance holds it. */
  lockRetries: number;
  /** What asked for it (metrics); `sweep` when not given. */
  trigger?: RefillTrigger;
  /** Take the shard's adaptive refill size (RefillAhead) instead of `minWanted`, and record it. */
  adaptive?: boolean;
}

/**
 * One refill of one shard's list under the shard's Redlock: read the list again (another instance
 * may have refilled), allocate a segment and push it. The lock only keeps instances from
 * over-filling; uniqueness rests on the row update and the list's marker (SegmentAllocation).
 */
@Injectable()
export class ShardRefill {
  private readonly logger = new Logger(ShardRefill.name);

  constructor(private readonly lock: QueueLocks, private readonly lists: QueueLists, private readonly segments: SegmentAllocation) {}

  /** Refills one shard under its lock. Throws on Redis/DB failure. */
  async refill(shard: ShardRef, req: RefillRequest): Promise<RefillResult> {
    const outcome = await this.lock.shard(shard, req.lockRetries, () => this.refillLocked(shard, req));
    return outcome.acquired ? outcome.value : { status: 'busy', pushed: 0 };
  }

  private async refillLocked(shard: ShardRef, req: RefillRequest): Promise<RefillResult> {
    // Another instance may have refilled while we waited for the lock.
    if ((await this.lists.length(shard.appId, shard.shardId)) >= req.skipIfAtLeast) {
      return { status: 'sufficient', pushed: 0 };
    }
    const adaptive = req.adaptive ?? false;
    const wanted = this.segments.sizeFor(shard, req.minWanted, adaptive);
    await this.segments.assertUsable(shard);
    // A segment refused by the list's marker is a gap; the row was moved past the marker if it
    // was behind it, so one more allocation normally lands above.
    for (let attempt = 0; attempt < 2; attempt++) {
      const allocation = await this.segments.allocate(req.trigger ?? 'sweep', shard, wanted);
      if (!allocation) {
        return { status: 'missing', pushed: 0 };
      }
      if (!allocation.segment) {
        return { status: 'exhausted', pushed: 0 };
      }
      const { from, to } = allocation.segment;
      // From here the indexes are ours alone: a crash before the push only leaves a gap, and the
      // push runs at most once (the list's marker), whatever the Redis client resends.
      const pushed = await this.segments.push(shard, from, to, allocation.maxIndex);
      if (typeof pushed === 'number') {
        this.segments.recordSize(shard, wanted, adaptive);
        this.logger.debug(`refilled ${describeShard(shard)} with ${from}..${to}`);
        return { status: 'refilled', pushed };
      }
      if (pushed === 'limited') {
        break;
      }
    }
    return { status: 'refused', pushed: 0 };
  }
}
