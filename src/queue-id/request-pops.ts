import { Inject, Injectable } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { LengthReads } from './core/length-reads';
import { PoppedIndexes, QueueLists } from './core/queue-lists';
import { RefillAhead } from './core/refill-ahead';
import { ShardRef } from './core/shard-ref';

/**
 * The request path's pops with refill-ahead on (QUEUE_REFILL_AHEAD): each also reads, when this
 * instance's length-read budget asks for it (core/length-reads.ts), the list's length after the
 * pop, which QueueIdService hands to BackgroundRefills.afterPop. Plain and reading pops go over
 * the same connection (the pop connection on a standalone Redis), so a reading pop's ticket
 * counts exactly the pops sent after it.
 */
@Injectable()
export class RequestPops {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly lists: QueueLists,
    private readonly reads: LengthReads,
    private readonly ahead: RefillAhead,
  ) {}

  /** Refill-ahead on: pop with `popOneIndex`/`popReadingLength` and report the length read. */
  get aheadEnabled(): boolean {
    return this.queue.refillAhead;
  }

  /**
   * A single get's pop, read into an index (QueueLists.popIndexes: `LPOP key 1` on the pop
   * connection of a standalone Redis). Plain (length -1) with refill-ahead off, or while this
   * instance's length-read budget for the shard lasts (the pop is counted); else a reading pop,
   * `LPOP key 1` and `LLEN key` sent together (`popReadingLength`). The plain pop's promise is
   * returned as it is (the hot path: no async layer). A plain pop that found the list empty must
   * be reported with `poppedNothing`.
   */
  popOneIndex(shard: ShardRef, step: number, maxIndex: bigint): Promise<PoppedIndexes> {
    if (!this.queue.refillAhead || this.reads.tryPlain(shard.appId, shard.shardId)) {
      return this.lists.popIndexes(shard.appId, shard.shardId, 1, maxIndex, false);
    }
    return this.popReadingLength(shard, step, 1, maxIndex);
  }

  /** A plain pop found the list empty: its length is unknown again (the next pop reads it). */
  poppedNothing(shard: ShardRef): void {
    if (this.queue.refillAhead) {
      this.reads.forget(shard.appId, shard.shardId);
    }
  }

  /**
   * A pop that reads the list's length after it (a batch's, always; a single get's when its
   * budget is spent): a plain `LPOP key n` and `LLEN key` sent together on one connection
   * (QueueLists.popIndexes; no script: a pop inside Lua costs Redis 5–9× more CPU per entry), the
   * entries read straight into indexes up to maxIndex. Its length renews this instance's budget.
   */
  async popReadingLength(shard: ShardRef, step: number, n: number, maxIndex: bigint): Promise<PoppedIndexes> {
    const { appId, shardId } = shard;
    const ticket = this.reads.readingPop(appId, shardId, n);
    const popped = await this.lists.popIndexes(appId, shardId, n, maxIndex, true);
    if (popped.length >= 0) {
      this.reads.read(appId, shardId, ticket, popped.length, this.ahead.threshold(appId, shardId, step));
    }
    return popped;
  }
}
