import { Inject, Injectable, Logger } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../../config/config-tokens';
import { AppRegistry } from '../core/app-registry';
import { QueueLists } from '../core/queue-lists';
import { RefillAhead } from '../core/refill-ahead';
import { needsRefill } from '../core/refill-policy';
import { ShardRef, describeShard } from '../core/shard-ref';
import { ShardRefill } from './shard-refill';

/**
 * Refills of one sweep running at once on this instance (different shards; each under its own
 * lock). A refill mostly waits for MySQL's commit and Redis, so a few at a time make a sweep of
 * thousands of empty lists (a cold start) several times shorter; more would take the DB pool's
 * connections from the request path's on-demand refills.
 */
const SWEEP_CONCURRENCY = 4;

export interface SweepCounts {
  checked: number;
  refilled: number;
  busy: number;
  exhausted: number;
  failed: number;
}

interface LowShard extends ShardRef {
  /** The shard's current refill size (its threshold is QUEUE_IDLE_RATIO × this). */
  size: number;
}

/**
 * The cron sweep: every shard whose list holds at most QUEUE_IDLE_RATIO × its refill size gets one
 * segment. A shard whose lock is held elsewhere is skipped. Refills run SWEEP_CONCURRENCY at a time.
 */
@Injectable()
export class LowListSweep {
  private readonly logger = new Logger(LowListSweep.name);

  constructor(
    private readonly lists: QueueLists,
    private readonly registry: AppRegistry,
    private readonly ahead: RefillAhead,
    private readonly refills: ShardRefill,
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
  ) {}

  async run(): Promise<SweepCounts> {
    const counts: SweepCounts = { checked: 0, refilled: 0, busy: 0, exhausted: 0, failed: 0 };
    const low = await this.lowShards(counts);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < low.length) {
        await this.refillOne(low[next++], counts);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, low.length) }, worker));
    return counts;
  }

  /** Every registered shard's list length (bounded batches: QueueLists.lengths), and those at or below their threshold. */
  private async lowShards(counts: SweepCounts): Promise<LowShard[]> {
    const targets: Array<ShardRef & { step: number }> = [];
    // Shards of deleted apps no longer need their refill state.
    this.ahead.retain((appId, shardId) => this.registry.has(appId, shardId));
    for (const app of this.registry.all()) {
      for (const [shardId, shard] of app.shards) {
        targets.push({ appId: app.appId, shardId, step: shard.step });
      }
    }
    const lengths = await this.lists.lengths(targets);
    const low: LowShard[] = [];
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i];
      const [err, len] = lengths[i] ?? [new Error('no reply'), 0];
      counts.checked++;
      if (err) {
        counts.failed++;
        continue;
      }
      const size = this.ahead.currentSize(t.appId, t.shardId, t.step);
      if (needsRefill(Number(len), size, this.queue.idleRatio)) {
        low.push({ appId: t.appId, shardId: t.shardId, size });
      }
    }
    return low;
  }

  private async refillOne(shard: LowShard, counts: SweepCounts): Promise<void> {
    try {
      const result = await this.refills.refill(shard, {
        skipIfAtLeast: Math.floor(this.queue.idleRatio * shard.size) + 1,
        minWanted: 1,
        lockRetries: 0,
        adaptive: true,
      });
      if (result.status === 'refilled') {
        counts.refilled++;
      } else if (result.status === 'busy') {
        counts.busy++;
      } else if (result.status === 'exhausted') {
        counts.exhausted++;
      }
    } catch (err) {
      counts.failed++;
      this.logger.warn(`refill of ${describeShard(shard)} failed: ${(err as Error).message}`);
    }
  }
}
