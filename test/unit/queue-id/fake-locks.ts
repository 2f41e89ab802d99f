import { LockOptions, LockOutcome, LockService } from '../../../src/infra/redis/lock.service';

/**
 * LockService.withLock in memory: one holder per key. A caller that finds the key held tries
 * again `retryCount` times, one macrotask apart (instead of `retryDelayMs`): a holder released
 * by the test before those ticks pass lets it in, one held on gives it `{ acquired: false }`.
 * `hold(key)` takes a key as another instance would, until the returned release is called.
 */
export class FakeLocks implements Pick<LockService, 'withLock'> {
  private readonly held = new Set<string>();
  private readonly watchers: Array<{ key: string; notify: () => void }> = [];
  /** Acquisitions that found the key held and gave up. */
  busy = 0;

  /** Resolves when a caller finds `key` held (and starts retrying or gives up). */
  contended(key: string): Promise<void> {
    return new Promise((notify) => this.watchers.push({ key, notify }));
  }

  hold(key: string): () => void {
    if (this.held.has(key)) {
      throw new Error(`${key} is already held`);
    }
    this.held.add(key);
    return () => {
      this.held.delete(key);
    };
  }

  isHeld(key: string): boolean {
    return this.held.has(key);
  }

  async withLock<T>(key: string, options: LockOptions, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    for (let attempt = 0; this.held.has(key); attempt++) {
      if (attempt === 0) {
        for (const w of this.watchers.filter((x) => x.key === key)) {
          this.watchers.splice(this.watchers.indexOf(w), 1);
          w.notify();
        }
      }
      if (attempt >= (options.retryCount ?? 0)) {
        this.busy++;
        return { acquired: false };
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.held.add(key);
    try {
      return { acquired: true, value: await fn() };
    } finally {
      this.held.delete(key);
    }
  }
}
