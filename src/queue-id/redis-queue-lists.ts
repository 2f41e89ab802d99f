import { Inject, Injectable } from '@nestjs/common';
import { deleteKeys, lengthsOf } from '../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { QueueKeys } from './core/queue-keys';
import { ListLength, PoppedEntries, QueueLists, RetiredList, SegmentPushOutcome } from './core/queue-lists';
import { definePopWithLength, popWithLength } from './pop-with-length';
import { ReplicaAckService } from './replica-ack.service';
import { defineRetireList, retireList } from './retire-list';
import { pushRange } from './segment-push';

/** Shards retired at once: one app (64 shards) in flight, bounded, and one slot per call on a Cluster. */
const RETIRE_BATCH = 64;

/**
 * The queue's lists in Redis (standalone, Sentinel or Cluster), named by the one QueueKeys
 * provider. Each list's key and its marker's key share a Cluster slot (QueueKeys.pushMark), so
 * every script here touches one slot.
 */
@Injectable()
export class RedisQueueLists extends QueueLists {
  readonly confirmsPops: boolean;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: QueueKeys,
    private readonly replicaAck: ReplicaAckService,
  ) {
    super();
    this.confirmsPops = replicaAck.enabled;
    // Scripts defined before any command is sent (pop-with-length.ts: auto-pipelining).
    definePopWithLength(redis);
    defineRetireList(redis);
  }

  /**
   * LPOP (with a count for n > 1). The entries stay Buffers: ioredis's Buffer → string conversion
   * was half of its CPU time for a batch (docs/performance.md); parseQueueEntry reads the digits.
   */
  async pop(appId: number, shardId: number, n: number): Promise<Uint8Array[]> {
    const key = this.keys.list(appId, shardId);
    if (n === 1) {
      const v = await this.redis.lpopBuffer(key);
      return v === null ? [] : [v];
    }
    return (await this.redis.lpopBuffer(key, n)) ?? [];
  }

  /** One EVALSHA of pop-with-length.ts: the LPOP and the LLEN after it, atomically. */
  popWithLength(appId: number, shardId: number, n: number): Promise<PoppedEntries> {
    return popWithLength(this.redis, this.keys.list(appId, shardId), n);
  }

  /**
   * `LPOP key n` and `LLEN key` sent together on the same connection (one round trip, no script:
   * a pop inside Lua converts every entry to a Lua string, 5–9× Redis's CPU per entry of a plain
   * LPOP). A failed LLEN leaves the length unknown (-1).
   */
  async popThenLength(appId: number, shardId: number, n: number): Promise<PoppedEntries> {
    const key = this.keys.list(appId, shardId);
    const popped = this.redis.lpopBuffer(key, n);
    const length = this.redis.llen(key).then(Number, () => -1);
    const entries = await popped.catch(async (err: unknown) => {
      await length;
      throw err;
    });
    return { entries: entries ?? [], length: await length };
  }

  /** The pop (and LLEN) and its WAIT in one pipeline on one connection (replica-ack.service.ts). */
  popConfirmed(appId: number, shardId: number, n: number, withLength: boolean): Promise<PoppedEntries> {
    return this.replicaAck.popConfirmed(this.keys.list(appId, shardId), n, withLength);
  }

  /** The connection epoch: a reconnect after it voids every confirmation (core/wait-verdict.ts). */
  confirmMark(): number {
    return this.replicaAck.epochNow;
  }

  /** WAIT on the connection that serves the list (its node in a Cluster). */
  confirmPops(appId: number, shardId: number, mark: number): Promise<void> {
    return this.replicaAck.confirm(this.keys.list(appId, shardId), mark);
  }

  length(appId: number, shardId: number): Promise<number> {
    return this.redis.llen(this.keys.list(appId, shardId));
  }

  /** LLENs in pipelines of 1,000 (lengthsOf), so thousands of lists never hold the event loop. */
  lengths(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<ListLength[]> {
    return lengthsOf(
      this.redis,
      shards.map((s) => this.keys.list(s.appId, s.shardId)),
    );
  }

  /** The at-most-once push of segment-push.ts: a claim script, then RPUSHes of 10,000 indexes written by the service. */
  pushSegment(appId: number, shardId: number, from: bigint, to: bigint): Promise<SegmentPushOutcome> {
    return pushRange(this.redis, this.keys.list(appId, shardId), this.keys.pushMark(appId, shardId), from, to);
  }

  /** One script per shard (retire-list.ts), RETIRE_BATCH in flight at a time. */
  async retire(shards: readonly RetiredList[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < shards.length; i += RETIRE_BATCH) {
      const counts = await Promise.all(
        shards
          .slice(i, i + RETIRE_BATCH)
          .map((r) => retireList(this.redis, this.keys.list(r.appId, r.shardId), this.keys.pushMark(r.appId, r.shardId), r.maxId)),
      );
      deleted += counts.reduce((a, b) => a + Number(b), 0);
    }
    return deleted;
  }

  deleteLists(appId: number, shardIds: Iterable<number>): Promise<number> {
    return deleteKeys(
      this.redis,
      [...shardIds].map((s) => this.keys.list(appId, s)),
    );
  }
}
