import { Inject, Injectable } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { LockOutcome, LockService } from '../infra/redis/lock.service';
import { QueueKeys } from './core/queue-keys';
import { ShardRef } from './core/shard-ref';

/** What a refill needs of the lock service: one shard's lock around a refill. */
export type ShardLocks = Pick<LockService, 'withLock'>;

/** Pause between two attempts at a shard's lock held elsewhere. */
const LOCK_RETRY_DELAY_MS = 50;

/**
 * The queue's Redlocks, QUEUE_LOCK_TTL_MS each: a shard's (`{prefix}lock_{app}_{shard}`) around a
 * refill, and the reload's (one instance at a time cleans Redis up after a reload).
 */
@Injectable()
export class QueueLocks {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly keys: QueueKeys,
    @Inject(LockService) private readonly locks: ShardLocks,
  ) {}

  /** Attempts at the lock within QUEUE_DEMAND_LOCK_WAIT_MS (an on-demand refill's wait). */
  get demandRetries(): number {
    return Math.ceil(this.queue.demandLockWaitMs / LOCK_RETRY_DELAY_MS);
  }

  /** Runs `fn` under the reload's lock when no other instance holds it. */
  reload<T>(fn: () => Promise<T>): Promise<LockOutcome<T>> {
    return this.locks.withLock(this.keys.reloadLock(), { ttlMs: this.queue.lockTtlMs, retryCount: 0 }, fn);
  }

  /** Runs `fn` under the shard's lock, trying `retries` more times 50 ms apart while it is held elsewhere. */
  shard<T>(shard: ShardRef, retries: number, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    return this.locks.withLock(
      this.keys.lock(shard.appId, shard.shardId),
      { ttlMs: this.queue.lockTtlMs, retryCount: retries, retryDelayMs: LOCK_RETRY_DELAY_MS },
      fn,
    );
  }
}
