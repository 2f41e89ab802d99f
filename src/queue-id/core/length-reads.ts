import { MAX_APP_ID, SHARD_COUNT } from './queue-id-layout';

/**
 * Instances assumed to pop one shard at about the same rate. After reading a list's length L
 * above the shard's threshold T, this instance pops (L − T) / POPPERS plain entries before it
 * reads again: even if POPPERS − 1 other instances pop as many meanwhile, the list is still at or
 * above T when this instance reads it next.
 */
export const POPPERS = 64;

/** One slot per (app, shard): appId * SHARD_COUNT + shardId. */
const SLOTS = (MAX_APP_ID + 1) * SHARD_COUNT;

/**
 * Entries this instance may pop without reading the length, after reading `length` with the
 * shard's refill-ahead threshold at `threshold`: floor((length − threshold) / POPPERS), 0 at or
 * below the threshold. A plain pop never takes the list to the threshold on its own: after
 * b = floor((L − T) / 64) pops the list holds L − b ≥ T + 63/64 · (L − T) > T.
 */
export function popsWithoutLength(length: number, threshold: number): number {
  return length > threshold ? Math.floor((length - threshold) / POPPERS) : 0;
}

/**
 * When the request path reads a list's length for refill-ahead (framework-free). A read is an
 * `LLEN key` sent with the pop (RequestPops.popReadingLength), where a plain `LPOP key 1` would
 * do: an extra command for Redis and an extra reply to read per single get. So a single get reads
 * it only when this instance's budget for the shard is spent; batches always read it (an LLEN next
 * to an LPOP of many).
 *
 * Per shard: `budget`, the entries that may still be popped plainly; `sent`, the entries this
 * instance has asked to pop so far. A reading pop takes a ticket (`sent` after it); when its
 * length comes back, the entries popped since the ticket (sent later on the same connection, so
 * run after it) are taken off it: the budget is what the list holds now as far as this instance
 * knows. With one instance the refill is triggered by the same pop as when every pop reads the
 * length; with up to POPPERS instances popping alike, no later than one read of each.
 *
 * Plain and reading pops go over one connection (the pop connection on a standalone Redis, the
 * ioredis client otherwise), so the ticket counts exactly the request path's pops sent after it
 * (an on-demand refill's pops, through ioredis, are not counted: they only move when the next
 * refill starts). The LLEN runs
 * just after its pop, not atomically with it: another instance's pops or a refill's push in
 * between move the length read by a few entries, as they move it a moment later anyway.
 */
export class LengthReads {
  private readonly budget = new Float64Array(SLOTS);
  private readonly sent = new Float64Array(SLOTS);

  /**
   * True when one entry may be popped now without reading the length (the pop is counted);
   * false when this pop must read it (then call `readingPop`).
   */
  tryPlain(appId: number, shardId: number): boolean {
    const slot = appId * SHARD_COUNT + shardId;
    if (this.budget[slot] >= 1) {
      this.budget[slot]--;
      this.sent[slot]++;
      return true;
    }
    return false;
  }

  /** A pop of `n` entries that reads the length after it: its ticket for `read`. */
  readingPop(appId: number, shardId: number, n: number): number {
    const slot = appId * SHARD_COUNT + shardId;
    if (!(slot < SLOTS)) {
      return 0;
    }
    this.sent[slot] += n;
    return this.sent[slot];
  }

  /** The list held `length` entries after the reading pop with `ticket`; the threshold is `threshold`. */
  read(appId: number, shardId: number, ticket: number, length: number, threshold: number): void {
    const slot = appId * SHARD_COUNT + shardId;
    if (!(slot < SLOTS)) {
      return;
    }
    const since = this.sent[slot] - ticket;
    this.budget[slot] = popsWithoutLength(length - since, threshold);
  }

  /**
   * Every length is unknown again: the next pop of each shard reads it. Called when id_alloc is
   * re-read (AppRegistrySync.reload: the reload cron, a miss, and after every admin change on
   * this instance). A list replaced behind this instance's back (an app deleted and re-created, a
   * lowered max_limit_id deleting its lists, on another instance) is then never served from a
   * budget earned on the old list for longer than until this instance's next reload; without it,
   * a budget of up to ~1,500 plain pops (a read at 100,000 entries) could drain a new list of
   * 1,000 without the read that starts its refill ahead.
   */
  forgetAll(): void {
    this.budget.fill(0);
  }

  /** The list's length is not known any more (a plain pop found it empty): the next pop reads it. */
  forget(appId: number, shardId: number): void {
    const slot = appId * SHARD_COUNT + shardId;
    if (slot < SLOTS) {
      this.budget[slot] = 0;
    }
  }
}
