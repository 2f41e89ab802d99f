import { Inject, Injectable } from '@nestjs/common';
import { AppRegistry } from '../core/app-registry';
import { PushMarker } from '../core/push-marker';
import { QueueKeys } from '../core/queue-keys';
import { QueueLists } from '../core/queue-lists';
import { RefillAhead } from '../core/refill-ahead';
import { ShardRef } from '../core/shard-ref';
import { AllocationResult, IdAllocRepository } from '../id-alloc.repository';
import { RefillMonitor, RefillTrigger } from '../refill-monitor';
import { PushRefusal, SegmentClaims } from './segment-claims';

/** What a refill needs of id_alloc: the row update that hands out a segment, and the move past a marker. */
export type SegmentAllocator = Pick<IdAllocRepository, 'allocate' | 'advancePast'>;

/**
 * "Take a segment": the allocation from id_alloc (reported to the RefillMonitor), the size to ask
 * for, and the claim and push of the segment on the list's marker (segment-claims.ts). Uniqueness
 * rests on the row update in IdAllocRepository.allocate; the claim keeps a segment that went
 * through the list before from being handed out again.
 */
@Injectable()
export class SegmentAllocation {
  /** Allocation failures already reported to the monitor (not counted twice). */
  private readonly reportedFailures = new WeakSet<object>();
  private readonly claims: SegmentClaims;

  constructor(
    lists: QueueLists,
    protected readonly keys: QueueKeys,
    @Inject(IdAllocRepository) private readonly repo: SegmentAllocator,
    private readonly registry: AppRegistry,
    private readonly monitor: RefillMonitor,
    private readonly ahead: RefillAhead,
  ) {
    this.claims = new SegmentClaims(lists, keys, repo, monitor);
  }

  /** IdAllocRepository.allocate, reported to the RefillMonitor (metrics) with its outcome and time. */
  async allocate(trigger: RefillTrigger, shard: ShardRef, minWanted: number): Promise<AllocationResult | null> {
    const startedAt = process.hrtime.bigint();
    try {
      const allocation = await this.repo.allocate(shard.appId, shard.shardId, minWanted);
      if (allocation) {
        this.monitor.record(trigger, allocation.segment ? 'refilled' : 'exhausted', startedAt);
      }
      return allocation;
    } catch (err) {
      this.monitor.record(trigger, 'failed', startedAt);
      if (err instanceof Object) {
        this.reportedFailures.add(err);
      }
      throw err;
    }
  }

  /** True when `err` came out of `allocate` and was counted there already. */
  reported(err: unknown): boolean {
    return err instanceof Object && this.reportedFailures.has(err);
  }

  /** The minWanted of an allocation: the shard's adaptive size (not below what is needed) or `minWanted`. */
  sizeFor(shard: ShardRef, minWanted: number, adaptive: boolean): number {
    if (!adaptive) {
      return minWanted;
    }
    const step = this.registry.get(shard.appId)?.shards.get(shard.shardId)?.step;
    return step === undefined ? minWanted : Math.max(minWanted, this.ahead.sizeFor(shard.appId, shard.shardId, step));
  }

  /** Records an adaptive allocation of `wanted` IDs (the size of the shard's next refills grows from it). */
  recordSize(shard: ShardRef, wanted: number, adaptive: boolean): void {
    if (adaptive && this.registry.has(shard.appId, shard.shardId)) {
      this.ahead.recordRefill(shard.appId, shard.shardId, wanted);
    }
  }

  /** The list's marker read before an allocation: one that is not an index refuses the shard before id_alloc moves. */
  assertUsable(shard: ShardRef): Promise<PushMarker> {
    return this.claims.assertUsable(shard.appId, shard.shardId);
  }

  /** Claims from..to on the list's marker and pushes pushFrom..to once (SegmentClaims.push). */
  push(shard: ShardRef, from: bigint, to: bigint, maxIndex: bigint, pushFrom: bigint = from): Promise<number | PushRefusal> {
    return this.claims.push(shard.appId, shard.shardId, from, to, maxIndex, pushFrom);
  }
}
