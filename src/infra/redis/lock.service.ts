import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import Redlock, { ExecutionError, Lock, ResourceLockedError } from 'redlock';
import { forEachConnection } from './connection-events';
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

/** Redlock's drift allowance: the lock counts as ours until `ttl − (ttl × 0.01 + 2 ms)` after the attempt began. */
const DRIFT_FACTOR = 0.01;

/** Locks whose acquire or release may have run unanswered, kept to be released again (oldest dropped beyond this). */
const MAX_UNSURE = 10_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Redlock over the instance's Redis. `withLock` runs `fn` only if the lock is taken and releases
 * it; locks still held at shutdown are released there.
 *
 * The attempt to take a lock runs Redlock's own acquire script here, with a value chosen here,
 * rather than through `Redlock.acquire`: that one, when an attempt fails, awaits a release before
 * it rethrows (a second command on a Redis that just did not answer) and keeps the value to itself.
 * An attempt or a release that failed on Redis may still have run (a frozen server runs it when it
 * resumes): the lock would then stand until its TTL, and the shard's refills report "busy" for
 * that long. So its value is kept and released again, best effort and never awaited by a request,
 * each time a connection becomes ready, until that succeeds or the TTL has passed.
 */
@Injectable()
export class LockService implements OnApplicationShutdown {
  private readonly logger = new Logger(LockService.name);
  private readonly redlock: Redlock;
  private readonly held = new Set<Lock>();
  /** Locks that may stand without an owner, by value: released again at the next ready connection. */
  private readonly unsure = new Map<string, Lock>();
  private releasingUnsure = false;

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {
    this.redlock = new Redlock([redis], { retryCount: 0, retryDelay: 50, retryJitter: 25, driftFactor: DRIFT_FACTOR });
    // Without a listener Redlock's error events would be unhandled.
    this.redlock.on('error', () => undefined);
    forEachConnection(redis, (connection) => connection.on('ready', () => void this.releaseUnsure()));
  }

  /**
   * Attempts are made here, one script each: a busy lock is tried again up to `retryCount` times,
   * but a Redis failure (a timeout, a refused command) fails at once instead of costing every retry
   * its own command timeout.
   */
  async withLock<T>(key: string, options: LockOptions, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    let lock: Lock | null = null;
    for (let attempt = 0; lock === null; attempt++) {
      lock = await this.tryAcquire(key, options.ttlMs);
      if (lock === null) {
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
      // Free when this returns (a retry right after finds it so); bounded like every command, and
      // at once when the connection was just dropped as silent (command-deadlines.ts).
      await this.release(lock);
    }
  }

  /** One attempt: the lock, or null when another holder has it. Throws when Redis fails. */
  private async tryAcquire(key: string, ttlMs: number): Promise<Lock | null> {
    const value = randomBytes(16).toString('hex');
    const start = Date.now();
    const lock = new Lock(this.redlock, [key], value, [], start + ttlMs - Math.round(DRIFT_FACTOR * ttlMs) - 2);
    let taken: unknown;
    try {
      taken = await this.runScript(this.redlock.scripts.acquireScript, key, value, String(ttlMs));
    } catch (err) {
      // It may have run: the lock may stand with nobody to release it.
      this.keepUnsure(lock, start + ttlMs);
      throw err;
    }
    return Number(taken) === 1 ? lock : null;
  }

  /** EVALSHA of one of Redlock's scripts on one key, EVAL when Redis does not know it yet (it did not run). */
  private async runScript(script: { value: string; hash: string }, key: string, ...args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(script.hash, 1, key, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
        throw err;
      }
      return this.redis.eval(script.value, 1, key, ...args);
    }
  }

  /** Releases through Redlock; a release that failed on Redis is kept and tried again. */
  private async release(lock: Lock): Promise<void> {
    const until = lock.expiration;
    try {
      await lock.release();
    } catch (err) {
      if (err instanceof ExecutionError && (await notHeld(err))) {
        // Expired, or never taken: nothing to release.
        return;
      }
      this.keepUnsure(lock, until);
      this.logger.debug(`lock release of ${lock.resources.join(',')} failed: ${(err as Error).message}`);
    }
  }

  private keepUnsure(lock: Lock, until: number): void {
    lock.expiration = until;
    this.unsure.set(lock.value, lock);
    if (this.unsure.size > MAX_UNSURE) {
      this.unsure.delete(this.unsure.keys().next().value as string);
    }
  }

  /** One pass over the unsure locks still within their TTL (one pass at a time). */
  private async releaseUnsure(): Promise<void> {
    if (this.releasingUnsure || this.unsure.size === 0) {
      return;
    }
    this.releasingUnsure = true;
    try {
      const now = Date.now();
      const due = [...this.unsure.values()];
      this.unsure.clear();
      await Promise.all(due.filter((lock) => lock.expiration > now).map((lock) => this.release(lock)));
    } finally {
      this.releasingUnsure = false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.held].map((lock) => this.release(lock)));
    this.held.clear();
    await this.releaseUnsure();
  }
}

/** Every vote against was "not this lock" (expired, never taken, or another holder's), not a Redis failure. */
async function notHeld(err: ExecutionError): Promise<boolean> {
  const stats = await Promise.all(err.attempts);
  return stats.every((s) => [...s.votesAgainst.values()].every((e) => e instanceof ResourceLockedError));
}
