import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { NO_TEST_HOOKS, TEST_HOOKS, TestHooks } from '../common/test-hooks';
import { LockService } from '../infra/redis/lock.service';
import { AppRegistry } from './core/app-registry';
import { LengthReads } from './core/length-reads';
import { QueueKeys } from './core/queue-keys';
import { PoppedEntries, PoppedIndexes, QueueLists } from './core/queue-lists';
import { RefillAhead } from './core/refill-ahead';
import { needsRefill } from './core/refill-policy';
import { SingleFlight } from './core/single-flight';
import { AllocationResult, IdAllocRepository } from './id-alloc.repository';
import { RefillMonitor, RefillTrigger } from './refill-monitor';
import { SegmentClaims } from './segment-claims';

/** Pause between two attempts of an on-demand refill at a lock held elsewhere (QUEUE_DEMAND_LOCK_WAIT_MS in all). */
const LOCK_RETRY_DELAY_MS = 50;

/** At shutdown, background refills still running after this long are abandoned (a gap at most). */
const SHUTDOWN_WAIT_MS = 2000;

/**
 * Refills of one sweep running at once on this instance (different shards; each under its own
 * lock). A refill mostly waits for MySQL's commit and Redis, so a few at a time make a sweep of
 * thousands of empty lists (a cold start) several times shorter; more would take the DB pool's
 * connections from the request path's on-demand refills.
 */
const SWEEP_CONCURRENCY = 4;

/**
 * Background (ahead) refills running at once on this instance; more wait in a queue (their shard
 * counts as in flight meanwhile, so it is never triggered twice). Shards filled together drain
 * together: 64 shards of an app crossing their thresholds in the same second started 64 refills at
 * once, whose pushes (up to 100,000 entries each, in script runs of 10,000) queued in Redis ahead
 * of every pop — p99 of the request path went to ~220 ms (docs/performance.md, issue 16). Two at a
 * time keep a pop behind at most two push runs; 64 refills of 1,000 still finish in well under a
 * second, long before the lists reach empty.
 */
const AHEAD_CONCURRENCY = 2;

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

/** What the refill needs of id_alloc: the row update that hands out a segment. */
export type SegmentAllocator = Pick<IdAllocRepository, 'allocate' | 'advancePast'>;

/** What the refill needs of the lock service: one shard's lock around a refill. */
export type ShardLocks = Pick<LockService, 'withLock'>;

export interface RefillSweep {
  checked: number;
  refilled: number;
  busy: number;
  exhausted: number;
  failed: number;
}

/**
 * Moves segments from `id_alloc` into the Redis lists. Uniqueness rests on the row update in
 * IdAllocRepository.allocate; the per-shard Redlock only keeps instances from over-filling.
 */
@Injectable()
export class QueueRefillService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(QueueRefillService.name);
  /** Background (ahead) refills running on this instance (at most AHEAD_CONCURRENCY). */
  private readonly running = new Set<Promise<void>>();
  /** Background refills triggered while AHEAD_CONCURRENCY were running, in trigger order. */
  private readonly waiting: Array<{ appId: number; shardId: number; step: number }> = [];
  /** Allocation failures already reported to the monitor (not counted twice). */
  private readonly recorded = new WeakSet<object>();
  private closing = false;
  /** The marker checks of every allocation (segment-claims.ts). */
  private readonly claims: SegmentClaims;
  /** On-demand refills without the lock: one per shard at a time on this instance. */
  private readonly unlocked = new SingleFlight();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lists: QueueLists,
    private readonly keys: QueueKeys,
    @Inject(LockService) private readonly locks: ShardLocks,
    @Inject(IdAllocRepository) private readonly repo: SegmentAllocator,
    private readonly registry: AppRegistry,
    @Inject(TEST_HOOKS) private readonly hooks: TestHooks = NO_TEST_HOOKS,
    private readonly monitor: RefillMonitor = new RefillMonitor(),
    readonly ahead: RefillAhead = new RefillAhead({
      idleRatio: config.queue.idleRatio,
      targetMs: config.queue.refillTargetMs,
      maxSize: config.queue.refillMaxSize,
    }),
    /** When a single get reads its list's length (core/length-reads.ts); forgotten on each reload. */
    private readonly reads: LengthReads = new LengthReads(),
  ) {
    this.claims = new SegmentClaims(lists, keys, repo, monitor);
  }

  /** Refill-ahead on: the request path pops with `popAhead` and calls `afterPop` when it read the length. */
  get aheadEnabled(): boolean {
    return this.config.queue.refillAhead;
  }

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
   * The request path after a pop that served it: when the pop left the list at or below the
   * shard's threshold and no refill of the shard is running here, start one in the background.
   * Never waits and never throws; a failed refill is logged and counted (trigger="ahead").
   */
  afterPop(appId: number, shardId: number, step: number, lengthAfter: number): void {
    if (this.closing || !this.ahead.afterPop(appId, shardId, step, lengthAfter)) {
      return;
    }
    if (this.running.size >= AHEAD_CONCURRENCY) {
      this.waiting.push({ appId, shardId, step });
      return;
    }
    this.startAhead(appId, shardId, step);
  }

  /** Starts waiting background refills while fewer than AHEAD_CONCURRENCY run (none once closing). */
  private startWaiting(): void {
    while (this.running.size < AHEAD_CONCURRENCY && this.waiting.length > 0) {
      const next = this.waiting.shift() as { appId: number; shardId: number; step: number };
      if (this.closing) {
        this.ahead.finished(next.appId, next.shardId);
        continue;
      }
      this.startAhead(next.appId, next.shardId, next.step);
    }
  }

  private startAhead(appId: number, shardId: number, step: number): void {
    const startedAt = process.hrtime.bigint();
    const run = this.refillAheadOf(appId, shardId, step)
      .catch((err: unknown) => {
        if (!(err instanceof Object) || !this.recorded.has(err)) {
          this.monitor.record('ahead', 'failed', startedAt);
        }
        this.logger.warn(`refill ahead of app ${appId} shard ${shardId} failed: ${(err as Error)?.message ?? err}`);
      })
      .finally(() => {
        this.ahead.finished(appId, shardId);
        this.running.delete(run);
        this.startWaiting();
      });
    this.running.add(run);
  }

  private async refillAheadOf(appId: number, shardId: number, step: number): Promise<void> {
    // Under the lock the list is read again: another instance (or the sweep) may have refilled.
    await this.refillShard(appId, shardId, {
      skipIfAtLeast: Math.floor(this.ahead.threshold(appId, shardId, step)) + 1,
      minWanted: 1,
      lockRetries: 0,
      trigger: 'ahead',
      adaptive: true,
    });
  }

  /** IdAllocRepository.allocate, reported to the RefillMonitor (metrics) with its outcome and time. */
  private async allocate(
    trigger: RefillTrigger,
    appId: number,
    shardId: number,
    minWanted: number,
  ): Promise<AllocationResult | null> {
    const startedAt = process.hrtime.bigint();
    try {
      const allocation = await this.repo.allocate(appId, shardId, minWanted);
      if (allocation) {
        this.monitor.record(trigger, allocation.segment ? 'refilled' : 'exhausted', startedAt);
      }
      return allocation;
    } catch (err) {
      this.monitor.record(trigger, 'failed', startedAt);
      if (err instanceof Object) {
        this.recorded.add(err);
      }
      throw err;
    }
  }

  /** The minWanted of an allocation: the shard's adaptive size (not below what is needed) or `minWanted`. */
  private wantedOf(appId: number, shardId: number, minWanted: number, adaptive: boolean): number {
    if (!adaptive) {
      return minWanted;
    }
    const step = this.registry.get(appId)?.shards.get(shardId)?.step;
    return step === undefined ? minWanted : Math.max(minWanted, this.ahead.sizeFor(appId, shardId, step));
  }

  /** Records an adaptive allocation of `wanted` IDs (the size of the shard's next refills grows from it). */
  private recordSize(appId: number, shardId: number, wanted: number, adaptive: boolean): void {
    if (adaptive && this.registry.has(appId, shardId)) {
      this.ahead.recordRefill(appId, shardId, wanted);
    }
  }

  /** Refills one shard under its lock. Throws on Redis/DB failure. */
  async refillShard(appId: number, shardId: number, req: RefillRequest): Promise<RefillResult> {
    const outcome = await this.locks.withLock(
      this.keys.lock(appId, shardId),
      { ttlMs: this.config.queue.lockTtlMs, retryCount: req.lockRetries, retryDelayMs: 50 },
      async (): Promise<RefillResult> => {
        // Another instance may have refilled while we waited for the lock.
        if ((await this.lists.length(appId, shardId)) >= req.skipIfAtLeast) {
          return { status: 'sufficient', pushed: 0 };
        }
        const adaptive = req.adaptive ?? false;
        const wanted = this.wantedOf(appId, shardId, req.minWanted, adaptive);
        // A marker that is not an index refuses the shard before id_alloc moves.
        await this.claims.assertUsable(appId, shardId);
        // A segment refused by the list's marker is a gap; the row was moved past the marker if
        // it was behind it, so one more allocation normally lands above.
        for (let attempt = 0; attempt < 2; attempt++) {
          const allocation = await this.allocate(req.trigger ?? 'sweep', appId, shardId, wanted);
          if (!allocation) {
            return { status: 'missing', pushed: 0 };
          }
          if (!allocation.segment) {
            return { status: 'exhausted', pushed: 0 };
          }
          const { from, to } = allocation.segment;
          await this.testDelay(appId, shardId, from, to);
          // From here the indexes are ours alone: a crash before the push only leaves a gap, and
          // the push runs at most once (the list's marker), whatever the Redis client resends.
          const pushed = await this.claims.push(appId, shardId, from, to, allocation.maxIndex);
          if (typeof pushed === 'number') {
            this.recordSize(appId, shardId, wanted, adaptive);
            this.logger.debug(`refilled app ${appId} shard ${shardId} with ${from}..${to}`);
            return { status: 'refilled', pushed };
          }
          if (pushed === 'limited') {
            break;
          }
        }
        return { status: 'refused', pushed: 0 };
      },
    );
    return outcome.acquired ? outcome.value : { status: 'busy', pushed: 0 };
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
  async takeOnDemand(appId: number, shardId: number, wanted: number): Promise<TakeResult> {
    const take = async (adaptive: boolean, wanted: number): Promise<TakeResult> => {
      const indexes: Array<string | Uint8Array> = await this.lists.pop(appId, shardId, wanted);
      // A segment refused by the list's marker is moved past once and allocated again.
      for (let attempt = 0; attempt < 2 && indexes.length < wanted; attempt++) {
        const short = wanted - indexes.length;
        // Under the lock a shard whose refills grew takes its grown size (at least what is lacking).
        const size = this.wantedOf(appId, shardId, short, adaptive);
        await this.claims.assertUsable(appId, shardId);
        const allocation = await this.allocate('demand', appId, shardId, size);
        if (!allocation) {
          return { status: 'missing', indexes };
        }
        if (!allocation.segment) {
          return { status: 'exhausted', indexes };
        }
        const { from, to } = allocation.segment;
        await this.testDelay(appId, shardId, from, to);
        const lastTaken = from + BigInt(short) - 1n < to ? from + BigInt(short) - 1n : to;
        // The whole segment is claimed on the list's marker before any of it is handed out: a
        // marker above it means these indexes went through the list before (handed out already).
        const pushed = await this.claims.push(appId, shardId, from, to, allocation.maxIndex, lastTaken + 1n);
        if (pushed === 'limited') {
          return { status: 'limited', indexes };
        }
        if (pushed === 'refused') {
          continue;
        }
        this.recordSize(appId, shardId, size, adaptive);
        for (let i = from; i <= lastTaken; i++) {
          indexes.push(i.toString());
        }
        // A segment shorter than what was missing was cut at max_limit_id.
        return { status: indexes.length >= wanted ? 'taken' : 'exhausted', indexes };
      }
      return { status: indexes.length >= wanted ? 'taken' : 'refused', indexes };
    };
    const outcome = await this.locks.withLock(
      this.keys.lock(appId, shardId),
      {
        ttlMs: this.config.queue.lockTtlMs,
        retryCount: Math.ceil(this.config.queue.demandLockWaitMs / LOCK_RETRY_DELAY_MS),
        retryDelayMs: LOCK_RETRY_DELAY_MS,
      },
      () => take(true, wanted),
    );
    if (outcome.acquired) {
      return outcome.value;
    }
    // Without the lock, one refill of the shard at a time here: a request that waited for another
    // one pops what it queued and, still short, runs the next (a failed one fails its waiters).
    const unlocked = (need: number, got: ReadonlyArray<string | Uint8Array>): Promise<TakeResult> =>
      this.unlocked.run(
        `${appId}/${shardId}`,
        async () => {
          const taken = await take(false, need);
          return { ...taken, indexes: [...got, ...taken.indexes] };
        },
        async () => {
          const more = await this.lists.pop(appId, shardId, need);
          const all = [...got, ...more];
          return more.length >= need ? { status: 'taken', indexes: all } : unlocked(need - more.length, all);
        },
      );
    return unlocked(wanted, []);
  }

  /**
   * The test hook `refillDelayMs` (TestHooks; 0 in production): widens the window between the
   * allocation and the push, and logs the held range with the list's name (the chaos suite
   * reads that line).
   */
  private async testDelay(appId: number, shardId: number, from: bigint, to: bigint): Promise<void> {
    const ms = this.hooks.refillDelayMs;
    if (ms > 0) {
      this.logger.warn(`TEST_REFILL_DELAY_MS: holding ${this.keys.list(appId, shardId)} ${from}..${to} for ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }

  /**
   * The single get's pop with refill-ahead on: the entry, and the list's length after the pop when
   * it was read (-1 when not). A plain pop while this instance's budget for the shard lasts
   * (core/length-reads.ts), else the atomic pop with length (a script).
   */
  async popAhead(appId: number, shardId: number, step: number): Promise<PoppedEntries> {
    if (this.reads.tryPlain(appId, shardId)) {
      const entries = await this.lists.pop(appId, shardId, 1);
      if (entries.length === 0) {
        this.reads.forget(appId, shardId);
      }
      return { entries, length: -1 };
    }
    const ticket = this.reads.readingPop(appId, shardId, 1);
    const popped = await this.lists.popWithLength(appId, shardId, 1);
    if (popped.length >= 0) {
      this.reads.read(appId, shardId, ticket, popped.length, this.ahead.threshold(appId, shardId, step));
    }
    return popped;
  }

  /**
   * A batch's pop with refill-ahead on: always reads the length (a plain `LPOP key n` and `LLEN`
   * sent together, QueueLists.popIndexes), the entries read straight into indexes up to maxIndex.
   */
  async popAheadBatch(appId: number, shardId: number, step: number, n: number, maxIndex: bigint): Promise<PoppedIndexes> {
    const ticket = this.reads.readingPop(appId, shardId, n);
    const popped = await this.lists.popIndexes(appId, shardId, n, maxIndex, true);
    if (popped.length >= 0) {
      this.reads.read(appId, shardId, ticket, popped.length, this.ahead.threshold(appId, shardId, step));
    }
    return popped;
  }

  /**
   * The cron sweep of seed 001's `reloadSegment`: every shard whose list holds at most
   * IDLE * step indexes gets one segment. A shard whose lock is held elsewhere is skipped. Refills
   * run SWEEP_CONCURRENCY at a time.
   */
  async refillLowShards(): Promise<RefillSweep> {
    const sweep: RefillSweep = { checked: 0, refilled: 0, busy: 0, exhausted: 0, failed: 0 };
    const targets: Array<{ appId: number; shardId: number; step: number }> = [];
    // Shards of deleted apps no longer need their refill state.
    this.ahead.retain((appId, shardId) => this.registry.has(appId, shardId));
    for (const app of this.registry.all()) {
      for (const [shardId, shard] of app.shards) {
        targets.push({ appId: app.appId, shardId, step: shard.step });
      }
    }
    // Lengths in bounded batches (QueueLists.lengths), so a sweep of thousands of lists never holds the event loop.
    const lengths = await this.lists.lengths(targets);
    const low: Array<{ appId: number; shardId: number; size: number }> = [];
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i];
      const [err, len] = lengths[i] ?? [new Error('no reply'), 0];
      sweep.checked++;
      if (err) {
        sweep.failed++;
        continue;
      }
      // The shard's threshold: QUEUE_IDLE_RATIO × its current refill size (the step unless it grew here).
      const size = this.ahead.currentSize(t.appId, t.shardId, t.step);
      if (needsRefill(Number(len), size, this.config.queue.idleRatio)) {
        low.push({ appId: t.appId, shardId: t.shardId, size });
      }
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < low.length) {
        const t = low[next++];
        try {
          const result = await this.refillShard(t.appId, t.shardId, {
            skipIfAtLeast: Math.floor(this.config.queue.idleRatio * t.size) + 1,
            minWanted: 1,
            lockRetries: 0,
            adaptive: true,
          });
          if (result.status === 'refilled') {
            sweep.refilled++;
          } else if (result.status === 'busy') {
            sweep.busy++;
          } else if (result.status === 'exhausted') {
            sweep.exhausted++;
          }
        } catch (err) {
          sweep.failed++;
          this.logger.warn(`refill of app ${t.appId} shard ${t.shardId} failed: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, low.length) }, worker));
    return sweep;
  }
}
