import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Redlock, { ExecutionError, Lock, ResourceLockedError } from 'redlock';
import { REDIS, RedisClient } from './redis.tokens';

export interface LockOptions {
  ttlMs: number;
  /** Further attempts after the first when the lock is busy (0: give up at once). */
  retryCount?: number;
  retryDelayMs?: number;
}

export type LockOutcome<T> = { acquired: true; value: T } | { acquired: false };

/** Random extra pause before a retry (as Redlock's retryJitter), so waiters do not retry in step. */
const RETRY_JITTER_MS = 25;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Redlock over the instance's Redis. `withLock` runs `fn` only if the lock is taken and always
 * releases it; locks still held at shutdown are released there.
 */
@Injectable()
export class LockService implements OnApplicationShutdown {
  private readonly logger = new Logger(LockService.name);
  private readonly redlock: Redlock;
  private readonly held = new Set<Lock>();

  constructor(@Inject(REDIS) redis: RedisClient) {
    this.redlock = new Redlock([redis], { retryCount: 0, retryDelay: 50, retryJitter: 25, driftFactor: 0.01 });
    // Without a listener Redlock's error events would be unhandled.
    this.redlock.on('error', () => undefined);
  }

  /**
   * Attempts are made here, one Redlock attempt each: a busy lock is tried again up to
   * `retryCount` times, but a Redis failure (a timeout, a refused command) fails at once instead of
   * costing every retry its own command timeout.
   */
  async withLock<T>(key: string, options: LockOptions, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    let lock: Lock | null = null;
    for (let attempt = 0; lock === null; attempt++) {
      try {
        lock = await this.redlock.acquire([key], options.ttlMs, { retryCount: 0 });
      } catch (err) {
        if (!(err instanceof ExecutionError && (await isBusy(err)))) {
          throw err;
        }
        if (attempt >= (options.retryCount ?? 0)) {
          return { acquired: false };
        }
        await sleep((options.retryDelayMs ?? 50) + Math.floor(Math.random() * RETRY_JITTER_MS));
      }
    }
    this.held.add(lock);
    try {
      return { acquired: true, value: await fn() };
    } finally {
      this.held.delete(lock);
      await this.release(lock);
    }
  }

  private async release(lock: Lock): Promise<void> {
    try {
      await lock.release();
    } catch (err) {
      // An expired lock cannot be released: that is fine, it is gone.
      this.logger.debug(`lock release of ${lock.resources.join(',')} failed: ${(err as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.held].map((lock) => this.release(lock)));
    this.held.clear();
  }
}

/** Every vote against was "resource locked" (another holder), not a Redis failure. */
async function isBusy(err: ExecutionError): Promise<boolean> {
  const stats = await Promise.all(err.attempts);
  return stats.every((s) => [...s.votesAgainst.values()].every((e) => e instanceof ResourceLockedError));
}
