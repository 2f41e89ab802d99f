import { needsRefill } from './refill-policy';
import { RefillSizeSettings, nextRefillSize, normaliseSize } from './refill-size';

export interface RefillAheadSettings extends RefillSizeSettings {
  /** QUEUE_IDLE_RATIO: a list at or below idleRatio * (current refill size) is refilled. */
  idleRatio: number;
}

interface ShardState {
  /** Size of the last refill of this shard on this instance (IDs). */
  size: number;
  /** When that refill allocated (clock ms). */
  at: number;
  /** A background refill of this shard is running on this instance. */
  inFlight: boolean;
}

/** Shards per app (queue-id-layout's SHARD_COUNT); the state key is appId * 64 + shardId. */
const SHARDS = 64;

/**
 * This instance's refill bookkeeping per queue shard, framework-free:
 * - the threshold: a pop that leaves the list at or below idleRatio × the shard's current refill
 *   size asks for one background refill (`afterPop`), unless one is already in flight here;
 * - the refill size: each refill records its size and time (`recordRefill`); the next one doubles
 *   or halves by how long the last one lasted (refill-size.ts).
 * The threshold scales with the refill size on purpose: a shard that grew its refills because it
 * is hot also needs a larger low-water mark to cover the time one refill takes.
 * State lives in memory: each instance adapts to the refills it makes itself; a restart starts
 * again at the configured step. Other instances are not seen here (the Redlock shard lock and
 * the idempotent push keep them safe).
 */
export class RefillAhead {
  private readonly shards = new Map<number, ShardState>();

  constructor(
    private readonly settings: RefillAheadSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The request path, after a pop: true when the caller must start one refill of the shard now
   * (it is then marked in flight until `finished`). Cheap: one Map lookup, no allocation.
   */
  afterPop(appId: number, shardId: number, step: number, lengthAfter: number): boolean {
    const state = this.shards.get(appId * SHARDS + shardId);
    const size = state ? normaliseSize(state.size, step, this.settings.maxSize) : step;
    if (!needsRefill(lengthAfter, size, this.settings.idleRatio) || state?.inFlight) {
      return false;
    }
    if (state) {
      state.inFlight = true;
    } else {
      // No refill seen yet on this instance: the size is the step until one is recorded.
      this.shards.set(appId * SHARDS + shardId, { size: step, at: Number.NaN, inFlight: true });
    }
    return true;
  }

  /** The background refill started by `afterPop` ended (whatever its outcome). */
  finished(appId: number, shardId: number): void {
    const state = this.shards.get(appId * SHARDS + shardId);
    if (state) {
      state.inFlight = false;
    }
  }

  inFlight(appId: number, shardId: number): boolean {
    return this.shards.get(appId * SHARDS + shardId)?.inFlight ?? false;
  }

  /** The size of the last refill (as valid for `step` now), or `step` when none was made here. */
  currentSize(appId: number, shardId: number, step: number): number {
    const state = this.shards.get(appId * SHARDS + shardId);
    return state ? normaliseSize(state.size, step, this.settings.maxSize) : step;
  }

  /** Queue length at or below which the shard is refilled. */
  threshold(appId: number, shardId: number, step: number): number {
    return this.settings.idleRatio * this.currentSize(appId, shardId, step);
  }

  /** The size a refill starting now takes: the last size, grown or shrunk by how long it lasted. */
  sizeFor(appId: number, shardId: number, step: number): number {
    const state = this.shards.get(appId * SHARDS + shardId);
    if (!state || Number.isNaN(state.at)) {
      return state ? normaliseSize(state.size, step, this.settings.maxSize) : step;
    }
    return nextRefillSize(state.size, step, this.now() - state.at, this.settings);
  }

  /** A refill of `size` IDs (as given by `sizeFor`) was allocated now. */
  recordRefill(appId: number, shardId: number, size: number): void {
    const key = appId * SHARDS + shardId;
    const state = this.shards.get(key);
    if (state) {
      state.size = size;
      state.at = this.now();
    } else {
      this.shards.set(key, { size, at: this.now(), inFlight: false });
    }
  }

  /** Drops the state of shards `keep` rejects (apps deleted); in-flight entries stay until finished. */
  retain(keep: (appId: number, shardId: number) => boolean): void {
    for (const [key, state] of this.shards) {
      if (!state.inFlight && !keep(Math.floor(key / SHARDS), key % SHARDS)) {
        this.shards.delete(key);
      }
    }
  }
}
