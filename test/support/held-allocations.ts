import { Logger } from '@nestjs/common';
import { ShardRef } from '../../src/queue-id/core/shard-ref';
import { AllocationResult } from '../../src/queue-id/id-alloc.repository';
import { RefillTrigger } from '../../src/queue-id/refill-monitor';
import { SegmentAllocation } from '../../src/queue-id/refill/segment-allocation';

/**
 * A SegmentAllocation whose refills wait `delayMs` between the id_alloc allocation and the push,
 * and log the held range with the list's name (`TEST_REFILL_DELAY_MS: holding <list> <from>..<to>`,
 * which the chaos suite waits for). Replaces the provider in a test's app (provider-overrides.ts)
 * or is built by hand in unit tests.
 */
export function heldSegmentAllocation(delayMs: number): typeof SegmentAllocation {
  class HeldSegmentAllocation extends SegmentAllocation {
    private readonly heldLog = new Logger('HeldSegmentAllocation');

    override async allocate(trigger: RefillTrigger, shard: ShardRef, minWanted: number): Promise<AllocationResult | null> {
      const allocation = await super.allocate(trigger, shard, minWanted);
      if (allocation?.segment && delayMs > 0) {
        const { from, to } = allocation.segment;
        this.heldLog.warn(`TEST_REFILL_DELAY_MS: holding ${this.keys.list(shard.appId, shard.shardId)} ${from}..${to} for ${delayMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
      return allocation;
    }
  }
  return HeldSegmentAllocation;
}
