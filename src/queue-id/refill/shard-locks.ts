import { Inject, Injectable } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../../config/config-tokens';
import { LockOutcome, LockService } from '../../infra/redis/lock.service';
import { QueueKeys } from '../core/queue-keys';
import { ShardRef } from '../core/shard-ref';

/** What a refill needs of the lock service: one shard's lock around a refill. */
export type ShardLocks = Pick<LockService, 'withLock'>;

/** Pause between two attempts at a shard's lock held elsewhere. */
const LOCK_RETRY_DELAY_MS = 50;

/** A shard's Redlock (`{prefix}lock_{app}_{shard}`, QUEUE_LOCK_TTL_MS) around a refill. */
@Injectable()
export class ShardLock {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly keys: QueueKeys,
    @Inject(LockService) private readonly locks: ShardLocks,
  ) {}

  /** Attempts at the lock within QUEUE_DEMAND_LOCK_WAIT_MS (an on-demand refill's wait). */
  get demandRetries(): number {
    return Math.ceil(this.queue.demandLockWaitMs / LOCK_RETRY_DELAY_MS);
  }

  /** Runs `fn` under the shard's lock, trying `retries` more times 50 ms apart while it is held elsewhere. */
  run<T>(shard: ShardRef, retries: number, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    return this.locks.withLock(
      this.keys.lock(shard.appId, shard.shardId),
      { ttlMs: this.queue.lockTtlMs, retryCount: retries, retryDelayMs: LOCK_RETRY_DELAY_MS },
      fn,
    );
  }
}
