import { QueueConfig } from '../../src/config/config-tokens';
import { AppRegistry } from '../../src/queue-id/core/app-registry';
import { LengthReads } from '../../src/queue-id/core/length-reads';
import { QueueKeys } from '../../src/queue-id/core/queue-keys';
import { QueueLists } from '../../src/queue-id/core/queue-lists';
import { RefillAhead } from '../../src/queue-id/core/refill-ahead';
import { RefillMonitor } from '../../src/queue-id/refill-monitor';
import { BackgroundRefills } from '../../src/queue-id/refill/background-refills';
import { LowListSweep } from '../../src/queue-id/refill/low-list-sweep';
import { OnDemandTake } from '../../src/queue-id/refill/on-demand-take';
import { SegmentAllocation, SegmentAllocator } from '../../src/queue-id/refill/segment-allocation';
import { QueueLocks, ShardLocks } from '../../src/queue-id/queue-locks';
import { ShardRefill } from '../../src/queue-id/refill/shard-refill';
import { RequestPops } from '../../src/queue-id/request-pops';

/** The refill's classes wired by hand, as QueueIdModule wires them (unit tests and bench workers). */
export interface RefillParts {
  ahead: RefillAhead;
  monitor: RefillMonitor;
  reads: LengthReads;
  segments: SegmentAllocation;
  shardRefill: ShardRefill;
  demand: OnDemandTake;
  background: BackgroundRefills;
  sweep: LowListSweep;
  pops: RequestPops;
}

export interface RefillDeps {
  lists: QueueLists;
  keys: QueueKeys;
  locks: ShardLocks;
  repo: SegmentAllocator;
  registry: AppRegistry;
  monitor?: RefillMonitor;
  ahead?: RefillAhead;
  reads?: LengthReads;
}

export function refillParts(queue: QueueConfig, deps: RefillDeps): RefillParts {
  const { lists, keys, locks, repo, registry } = deps;
  const monitor = deps.monitor ?? new RefillMonitor();
  const ahead = deps.ahead ?? new RefillAhead({ idleRatio: queue.idleRatio, targetMs: queue.refillTargetMs, maxSize: queue.refillMaxSize });
  const reads = deps.reads ?? new LengthReads();
  const segments = new SegmentAllocation(lists, keys, repo, registry, monitor, ahead);
  const lock = new QueueLocks(queue, keys, locks);
  const shardRefill = new ShardRefill(lock, lists, segments);
  return {
    ahead,
    monitor,
    reads,
    segments,
    shardRefill,
    demand: new OnDemandTake(lock, lists, segments),
    background: new BackgroundRefills(shardRefill, segments, ahead, monitor),
    sweep: new LowListSweep(lists, registry, ahead, shardRefill, queue),
    pops: new RequestPops(queue, lists, reads, ahead),
  };
}
