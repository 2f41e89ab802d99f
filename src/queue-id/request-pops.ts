import { Inject, Injectable } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { LengthReads } from './core/length-reads';
import { PoppedEntries, PoppedIndexes, QueueLists } from './core/queue-lists';
import { RefillAhead } from './core/refill-ahead';
import { ShardRef } from './core/shard-ref';

/**
 * The request path's pops with refill-ahead on (QUEUE_REFILL_AHEAD): each also reads, when this
 * instance's length-read budget asks for it (core/length-reads.ts), the list's length after the
 * pop, which QueueIdService hands to BackgroundRefills.afterPop.
 */
@Injectable()
export class RequestPops {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly lists: QueueLists,
    private readonly reads: LengthReads,
    private readonly ahead: RefillAhead,
  ) {}

  /** Refill-ahead on: pop with `popAhead`/`popAheadBatch` and report the length read. */
  get aheadEnabled(): boolean {
    return this.queue.refillAhead;
  }

  /**
   * A single get's plain pop, when one needs no length read: refill-ahead off, or this instance's
   * length-read budget for the shard lasts (the pop is counted). Null when this pop must read the
   * length (popAhead). An empty pop must be reported with `poppedNothing`.
   */
  plainPopOne(shard: ShardRef): Promise<Uint8Array | null> | null {
    if (this.queue.refillAhead && !this.reads.tryPlain(shard.appId, shard.shardId)) {
      return null;
    }
    return this.lists.popOne(shard.appId, shard.shardId);
  }

  /**
   * plainPopOne for the single get's common case: `LPOP key 1` read into an index as a batch's
   * entries are (QueueLists.popIndexes: on the pop connection of a standalone Redis). Null as
   * plainPopOne; an empty pop must be reported with `poppedNothing`.
   */
  plainPopIndex(shard: ShardRef, maxIndex: bigint): Promise<PoppedIndexes> | null {
    if (this.queue.refillAhead && !this.reads.tryPlain(shard.appId, shard.shardId)) {
      return null;
    }
    return this.lists.popIndexes(shard.appId, shard.shardId, 1, maxIndex, false);
  }

  /** A plain pop found the list empty: its length is unknown again (the next pop reads it). */
  poppedNothing(shard: ShardRef): void {
    if (this.queue.refillAhead) {
      this.reads.forget(shard.appId, shard.shardId);
    }
  }

  /**
   * A single get's pop: the entry, and the list's length after the pop when it was read (-1 when
   * not). A plain pop while this instance's budget for the shard lasts, else the atomic pop with
   * length (a script).
   */
  async popAhead(shard: ShardRef, step: number): Promise<PoppedEntries> {
    const plain = this.plainPopOne(shard);
    if (plain !== null) {
      const entry = await plain;
      if (entry === null) {
        this.poppedNothing(shard);
        return { entries: [], length: -1 };
      }
      return { entries: [entry], length: -1 };
    }
    const { appId, shardId } = shard;
    const ticket = this.reads.readingPop(appId, shardId, 1);
    const popped = await this.lists.popWithLength(appId, shardId, 1);
    if (popped.length >= 0) {
      this.reads.read(appId, shardId, ticket, popped.length, this.ahead.threshold(appId, shardId, step));
    }
    return popped;
  }

  /**
   * A batch's pop: always reads the length (a plain `LPOP key n` and `LLEN` sent together,
   * QueueLists.popIndexes), the entries read straight into indexes up to maxIndex.
   */
  async popAheadBatch(shard: ShardRef, step: number, n: number, maxIndex: bigint): Promise<PoppedIndexes> {
    const { appId, shardId } = shard;
    const ticket = this.reads.readingPop(appId, shardId, n);
    const popped = await this.lists.popIndexes(appId, shardId, n, maxIndex, true);
    if (popped.length >= 0) {
      this.reads.read(appId, shardId, ticket, popped.length, this.ahead.threshold(appId, shardId, step));
    }
    return popped;
  }
}
