import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { RefillAhead } from '../core/refill-ahead';
import { ShardRef, describeShard } from '../core/shard-ref';
import { RefillMonitor } from '../refill-monitor';
import { SegmentAllocation } from './segment-allocation';
import { ShardRefill } from './shard-refill';

/** At shutdown, background refills still running after this long are abandoned (a gap at most). */
const SHUTDOWN_WAIT_MS = 2000;

/**
 * Background (ahead) refills running at once on this instance; more wait in a queue (their shard
 * counts as in flight meanwhile, so it is never triggered twice). Shards filled together drain
 * together: many refills started at once would queue their pushes (up to 100,000 entries each, in
 * script runs of 10,000) in Redis ahead of every pop, and the request path's p99 would follow
 * (docs/performance.md). Two at a time keep a pop behind at most two push runs; 64 refills of
 * 1,000 still finish in well under a second, long before the lists reach empty.
 */
const AHEAD_CONCURRENCY = 2;

interface Waiting {
  shard: ShardRef;
  step: number;
}

/**
 * The refill-ahead runner: the request path reports the length a pop left (`afterPop`), and a
 * shard at or below its threshold gets one background refill, AHEAD_CONCURRENCY at a time.
 * Never waits and never throws to the request; a failed refill is logged and counted (trigger="ahead").
 */
@Injectable()
export class BackgroundRefills implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BackgroundRefills.name);
  private readonly running = new Set<Promise<void>>();
  /** Refills triggered while AHEAD_CONCURRENCY were running, in trigger order. */
  private readonly waiting: Waiting[] = [];
  private closing = false;

  constructor(
    private readonly refills: ShardRefill,
    private readonly segments: SegmentAllocation,
    private readonly ahead: RefillAhead,
    private readonly monitor: RefillMonitor,
  ) {}

  /**
   * No new background refill once the app closes; the running ones are awaited, for at most
   * SHUTDOWN_WAIT_MS (each of their calls is bounded; one abandoned at exit is a gap).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.settled(), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Resolves when no background refill is running or waiting on this instance (they never reject). */
  async settled(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.all([...this.running]);
    }
  }

  /**
   * After a pop that served its request: when the pop left the list at or below the shard's
   * threshold and no refill of the shard is running here, start one in the background.
   */
  afterPop(shard: ShardRef, step: number, lengthAfter: number): void {
    if (this.closing || !this.ahead.afterPop(shard.appId, shard.shardId, step, lengthAfter)) {
      return;
    }
    if (this.running.size >= AHEAD_CONCURRENCY) {
      this.waiting.push({ shard, step });
      return;
    }
    this.start(shard, step);
  }

  /** Starts waiting refills while fewer than AHEAD_CONCURRENCY run (none once closing). */
  private startWaiting(): void {
    while (this.running.size < AHEAD_CONCURRENCY && this.waiting.length > 0) {
      const next = this.waiting.shift() as Waiting;
      if (this.closing) {
        this.ahead.finished(next.shard.appId, next.shard.shardId);
        continue;
      }
      this.start(next.shard, next.step);
    }
  }

  private start(shard: ShardRef, step: number): void {
    const startedAt = process.hrtime.bigint();
    const run = this.refillAhead(shard, step)
      .catch((err: unknown) => {
        if (!this.segments.reported(err)) {
          this.monitor.record('ahead', 'failed', startedAt);
        }
        this.logger.warn(`refill ahead of ${describeShard(shard)} failed: ${(err as Error)?.message ?? err}`);
      })
      .finally(() => {
        this.ahead.finished(shard.appId, shard.shardId);
        this.running.delete(run);
        this.startWaiting();
      });
    this.running.add(run);
  }

  private async refillAhead(shard: ShardRef, step: number): Promise<void> {
    // Under the lock the list is read again: another instance (or the sweep) may have refilled.
    await this.refills.refill(shard, {
      skipIfAtLeast: Math.floor(this.ahead.threshold(shard.appId, shard.shardId, step)) + 1,
      minWanted: 1,
      lockRetries: 0,
      trigger: 'ahead',
      adaptive: true,
    });
  }
}
