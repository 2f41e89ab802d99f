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
   * A single get's pop: the entry, and the list's length after the pop when it was read (-1 when
   * not). A plain pop while this instance's budget for the shard lasts, else the atomic pop with
   * length (a script).
   */
  async popAhead(shard: ShardRef, step: number): Promise<PoppedEntries> {
    const { appId, shardId } = shard;
    if (this.reads.tryPlain(appId, shardId)) {
      const entries = await this.lists.pop(appId, shardId, 1);
      if (entries.length === 0) {
        this.reads.forget(appId, shardId);
      }
      return { entries, length: -1 };
    }
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
