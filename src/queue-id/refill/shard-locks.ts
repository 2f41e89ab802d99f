import { LockOutcome, LockService } from '../../infra/redis/lock.service';
import { QueueConfig } from '../../config/config-tokens';
import { QueueKeys } from '../core/queue-keys';
import { ShardRef } from '../core/shard-ref';

/** What a refill needs of the lock service: one shard's lock around a refill. */
export type ShardLocks = Pick<LockService, 'withLock'>;

/** Pause between two attempts at a shard's lock held elsewhere. */
export const LOCK_RETRY_DELAY_MS = 50;

/** Runs `fn` under the shard's Redlock (QUEUE_LOCK_TTL_MS), trying `retries` more times 50 ms apart. */
export function withShardLock<T>(
  locks: ShardLocks,
  keys: QueueKeys,
  queue: QueueConfig,
  shard: ShardRef,
  retries: number,
  fn: () => Promise<T>,
): Promise<LockOutcome<T>> {
  return locks.withLock(keys.lock(shard.appId, shard.shardId), { ttlMs: queue.lockTtlMs, retryCount: retries, retryDelayMs: LOCK_RETRY_DELAY_MS }, fn);
}
