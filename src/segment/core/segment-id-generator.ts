import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { LeafAlloc, LeafAllocStore } from './leaf-alloc-store';
import { SegmentBuffer, SegmentBufferView } from './segment-buffer';
import { SegmentClock } from './segment-clock';
import { MAX_STEP, nextStep } from './step-policy';
import { TagDiff, syncTags } from './tag-sync';

export interface SegmentGeneratorOptions {
  clock: SegmentClock;
  /** Largest dynamic step (Leaf's MAX_STEP). */
  maxStep?: number;
  /** A fetch taking longer is abandoned; its range becomes a gap. 0 disables the timeout. */
  loadTimeoutMs?: number;
  /** A request for an unknown tag re-reads the tags at most this often. */
  missSyncIntervalMs?: number;
  warn?: (message: string) => void;
}

interface Fetched {
  alloc: LeafAlloc;
  /** The step this fetch used. */
  step: number;
  /** Whether the fetch starts the dynamic-step clock (Leaf's updateTimestamp). */
  stamp: boolean;
}

/**
 * Leaf's SegmentIDGenImpl without threads: a double buffer per biz_tag, one background fetch of
 * the next segment once 10 % of the current one is used, callers that run out awaiting that
 * fetch, and a dynamic step. Framework-free: the DB is the LeafAllocStore port, time the clock.
 */
export class SegmentIdGenerator {
  private readonly cache = new Map<string, SegmentBuffer>();
  private readonly maxStep: number;
  private readonly loadTimeoutMs: number;
  private readonly missSyncIntervalMs: number;
  private readonly warn: (message: string) => void;
  private initOk = false;
  private syncing: Promise<TagDiff> | null = null;
  private lastMissSync = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: LeafAllocStore,
    private readonly options: SegmentGeneratorOptions,
  ) {
    this.maxStep = options.maxStep ?? MAX_STEP;
    this.loadTimeoutMs = options.loadTimeoutMs ?? 10_000;
    this.missSyncIntervalMs = options.missSyncIntervalMs ?? 1000;
    this.warn = options.warn ?? (() => undefined);
  }

  get isInitialised(): boolean {
    return this.initOk;
  }

  /** Re-reads the tags (add new, drop removed). Concurrent callers share one read. Throws on DB error. */
  sync(): Promise<TagDiff> {
    if (!this.syncing) {
      this.syncing = (async () => {
        try {
          const tags = await this.store.getAllTags();
          const diff = syncTags(this.cache, tags, (tag) => new SegmentBuffer(tag));
          this.initOk = true;
          return diff;
        } finally {
          this.syncing = null;
        }
      })();
    }
    return this.syncing;
  }

  /** `count` IDs of `key`, strictly increasing. Throws IdGenError (Leaf's -1, -2, -3). */
  async get(key: string, count = 1): Promise<bigint[]> {
    const buffer = await this.resolve(key);
    if (!buffer.initOk) {
      await this.initBuffer(buffer);
    }
    return this.take(buffer, count);
  }

  views(): SegmentBufferView[] {
    return [...this.cache.values()].map((b) => b.view()).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  view(key: string): SegmentBufferView | null {
    return this.cache.get(key)?.view() ?? null;
  }

  private async resolve(key: string): Promise<SegmentBuffer> {
    if (!this.initOk || !this.cache.has(key)) {
      await this.syncOnMiss();
    }
    if (!this.initOk) {
      throw new IdGenError(ErrorKind.SegmentNotInitialised, 'the segment ID generator has not loaded leaf_alloc yet; retry later');
    }
    const buffer = this.cache.get(key);
    if (!buffer) {
      throw keyNotFound(key);
    }
    return buffer;
  }

  /** A tag may have been created on another instance since the last sync: re-read, rate-limited. */
  private async syncOnMiss(): Promise<void> {
    const now = this.options.clock.now();
    if (!this.syncing && now - this.lastMissSync < this.missSyncIntervalMs) {
      return;
    }
    this.lastMissSync = now;
    try {
      await this.sync();
    } catch (err) {
      this.warn(`leaf_alloc tag sync failed: ${errorMessage(err)}`);
    }
  }

  private async initBuffer(buffer: SegmentBuffer): Promise<void> {
    const loading = buffer.loading ?? this.startLoad(buffer);
    if (!(await loading) && !buffer.initOk) {
      throw notReady(buffer);
    }
  }

  /**
   * Takes `count` IDs, switching segments as needed. Each pass takes IDs, switches to a loaded
   * segment, or awaits the fetch in flight; a fetch that fails ends the call with -3. So a
   * caller never spins, and while the DB is down each call costs it at most one attempt.
   */
  private async take(buffer: SegmentBuffer, count: number): Promise<bigint[]> {
    const out: bigint[] = [];
    for (;;) {
      buffer.current.takeInto(out, count - out.length);
      if (buffer.needsPreload()) {
        // In the background: its promise never rejects, and whoever runs out awaits it.
        void this.startLoad(buffer);
      }
      if (out.length === count) {
        return out;
      }
      if (buffer.nextReady) {
        buffer.switchPos();
        continue;
      }
      // The current segment is used up and the next is being fetched: wait for it, not spin.
      const loading = buffer.loading;
      if (loading === null || !(await loading)) {
        throw notReady(buffer);
      }
    }
  }

  /**
   * Starts the one fetch of this buffer: into the current segment before init, else the next.
   * The promise resolves to whether the fetch succeeded; it never rejects.
   */
  private startLoad(buffer: SegmentBuffer): Promise<boolean> {
    const init = !buffer.initOk;
    const target = init ? buffer.current : buffer.next;
    const loading = (async () => {
      try {
        const fetched = await this.withTimeout(this.fetch(buffer), buffer.key);
        if (fetched === null) {
          buffer.lastError = keyNotFound(buffer.key);
          return false;
        }
        // Applied only here, after the await: an abandoned (timed-out) fetch changes nothing.
        target.fill(fetched.alloc.maxId, fetched.step);
        buffer.step = fetched.step;
        buffer.minStep = fetched.alloc.step;
        if (fetched.stamp) {
          buffer.updateTimestamp = this.options.clock.now();
        }
        buffer.lastError = null;
        if (init) {
          buffer.initOk = true;
        } else {
          buffer.nextReady = true;
        }
        return true;
      } catch (err) {
        buffer.lastError = err;
        this.warn(`loading a segment of '${buffer.key}' failed: ${errorMessage(err)}`);
        return false;
      } finally {
        buffer.loading = null;
      }
    })();
    buffer.loading = loading;
    return loading;
  }

  /** Leaf's updateSegmentFromDb, minus the buffer updates (done by the caller). */
  private async fetch(buffer: SegmentBuffer): Promise<Fetched | null> {
    let fetched: Fetched | null;
    if (!buffer.initOk || buffer.updateTimestamp === 0) {
      const alloc = await this.store.updateMaxIdAndGetLeafAlloc(buffer.key);
      fetched = alloc && { alloc, step: alloc.step, stamp: buffer.initOk };
    } else {
      const duration = this.options.clock.now() - buffer.updateTimestamp;
      const wanted = nextStep(buffer.step, buffer.minStep, duration, this.maxStep);
      const alloc = await this.store.updateMaxIdByCustomStepAndGetLeafAlloc(buffer.key, wanted);
      fetched = alloc && { alloc, step: Math.max(wanted, alloc.step), stamp: true };
    }
    if (fetched && (!Number.isSafeInteger(fetched.step) || fetched.step < 1)) {
      throw new Error(`leaf_alloc step of '${buffer.key}' is ${fetched.alloc.step}; it must be at least 1`);
    }
    return fetched;
  }

  private withTimeout<T>(promise: Promise<T>, key: string): Promise<T> {
    if (this.loadTimeoutMs <= 0) {
      return promise;
    }
    return new Promise<T>((resolve, reject) => {
      const cancel = this.options.clock.setTimeout(
        () => reject(new Error(`loading a segment of '${key}' took longer than ${this.loadTimeoutMs} ms`)),
        this.loadTimeoutMs,
      );
      promise.then(
        (value) => {
          cancel();
          resolve(value);
        },
        (err: unknown) => {
          cancel();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}

function keyNotFound(key: string): IdGenError {
  return new IdGenError(ErrorKind.SegmentKeyNotFound, `biz_tag '${key}' is not in leaf_alloc`);
}

function notReady(buffer: SegmentBuffer): IdGenError {
  if (buffer.lastError instanceof IdGenError) {
    return buffer.lastError;
  }
  return new IdGenError(
    ErrorKind.SegmentBothNotReady,
    `both segments of '${buffer.key}' are used up and the next could not be loaded from leaf_alloc; retry later`,
  );
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
