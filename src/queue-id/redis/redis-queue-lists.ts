import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { deleteKeys, lengthsOf } from '../../infra/redis/redis-key-ops';
import { REDIS, RedisClient } from '../../infra/redis/redis.tokens';
import { QueueKeys } from '../core/queue-keys';
import { acceptEntries } from '../core/queue-batch';
import { MAX_APP_ID, SHARD_COUNT } from '../core/queue-id-layout';
import { ListLength, PoppedEntries, PoppedIndexes, QueueLists, RetiredList, SegmentPushOutcome, StoredLimit } from '../core/queue-lists';
import { POP_CONNECTION, PopConnection } from './pop-connection';
import { lpopRequest } from './resp/resp-encode';
import { ReplicaAckService } from './replica-ack.service';
import { applyLimit, dropLimit, readLimit, readLimits } from './list-limits';
import { raiseMarker } from './raise-marker';
import { retireList } from './retire-list';
import { pushRange } from './segment-push';

/** Shards retired at once: one app (64 shards) in flight, bounded, and one slot per call on a Cluster. */
const RETIRE_BATCH = 64;
/** Stored limits read by one script on one server (16 scripts at 256 apps instead of 16,384 commands). */
const LIMITS_PER_SCRIPT = 1000;

/**
 * The queue's lists in Redis (standalone, Sentinel or Cluster), named by the one QueueKeys
 * provider. Each list's key and its marker's key share a Cluster slot (QueueKeys.pushMark), so
 * every script here touches one slot.
 */
@Injectable()
export class RedisQueueLists extends QueueLists implements OnApplicationShutdown {
  readonly confirmsPops: boolean;
  /** The single get's `LPOP key 1` per list (appId × SHARD_COUNT + shardId), made on its first pop ('' until then). */
  private readonly singlePops: string[] = new Array<string>((MAX_APP_ID + 1) * SHARD_COUNT).fill('');

  /** `popConnection`: the pop connection, or null (pop-connection.ts: createPopConnection). */
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: QueueKeys,
    private readonly replicaAck: ReplicaAckService,
    @Inject(POP_CONNECTION) private readonly popConnection: PopConnection | null,
  ) {
    super();
    this.confirmsPops = replicaAck.enabled;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.popConnection?.close();
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

  /**
   * `LPOP key n` and `LLEN key` sent together on the same connection (one round trip, no script:
   * a pop inside Lua converts every entry to a Lua string, 5–9× Redis's CPU per entry of a plain
   * LPOP). A failed LLEN leaves the length unknown (-1), one that throws instead of rejecting too
   * (a safeguard: the pop, already sent, is awaited either way, its rejection never left unhandled).
   */
  async popThenLength(appId: number, shardId: number, n: number): Promise<PoppedEntries> {
    const key = this.keys.list(appId, shardId);
    const popped = this.redis.lpopBuffer(key, n);
    let length: Promise<number>;
    try {
      length = this.redis.llen(key).then(Number, () => -1);
    } catch {
      length = Promise.resolve(-1);
    }
    const entries = await popped.catch(async (err: unknown) => {
      await length;
      throw err;
    });
    return { entries: entries ?? [], length: await length };
  }

  /**
   * A pop read straight into indexes on the pop connection when there is one (its promise returned
   * as it is: the single get's hot path; `LPOP key 1` built once per list); through ioredis
   * (Buffers, then acceptEntries) on Sentinel and Cluster.
   */
  popIndexes(appId: number, shardId: number, n: number, maxIndex: bigint, withLength: boolean): Promise<PoppedIndexes> {
    const popConnection = this.popConnection;
    if (popConnection === null) {
      return this.popIndexesViaClient(appId, shardId, n, maxIndex, withLength);
    }
    if (n === 1 && !withLength) {
      const slot = appId * SHARD_COUNT + shardId;
      const request = this.singlePops[slot];
      if (request !== undefined) {
        return popConnection.popWith(request !== '' ? request : (this.singlePops[slot] = lpopRequest(this.keys.list(appId, shardId), 1, false)), 1, maxIndex, false);
      }
    }
    return popConnection.pop(this.keys.list(appId, shardId), n, maxIndex, withLength);
  }

  private async popIndexesViaClient(appId: number, shardId: number, n: number, maxIndex: bigint, withLength: boolean): Promise<PoppedIndexes> {
    const { entries, length } = withLength ? await this.popThenLength(appId, shardId, n) : { entries: await this.pop(appId, shardId, n), length: -1 };
    const indexes: number[] = [];
    const { overLimit, malformed } = acceptEntries(entries, maxIndex, indexes);
    return { indexes, overLimit, malformed, length };
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

  pushMark(appId: number, shardId: number): Promise<string | null> {
    return this.redis.get(this.keys.pushMark(appId, shardId));
  }

  /** One script (raise-marker.ts). */
  raiseMarker(appId: number, shardId: number, to: bigint): Promise<string | null> {
    return raiseMarker(this.redis, this.keys.pushMark(appId, shardId), to);
  }

  /** LLENs in bounded batches (lengthsOf: scripts of 1,000 keys on one server), so thousands of lists never hold the event loop. */
  lengths(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<ListLength[]> {
    return lengthsOf(
      this.redis,
      shards.map((s) => this.keys.list(s.appId, s.shardId)),
    );
  }

  /** The at-most-once push of segment-push.ts: a claim script, then RPUSHes of 10,000 indexes written by the service. */
  pushSegment(appId: number, shardId: number, from: bigint, to: bigint, pushFrom: bigint = from): Promise<SegmentPushOutcome> {
    return pushRange(
      this.redis,
      this.keys.list(appId, shardId),
      this.keys.pushMark(appId, shardId),
      from,
      to,
      pushFrom,
      this.keys.limitMark(appId, shardId),
    );
  }

  /** One script per shard (retire-list.ts), RETIRE_BATCH in flight at a time. */
  retire(shards: readonly RetiredList[]): Promise<number> {
    const keys = this.keys;
    return sumInBatches(shards, (r) =>
      retireList(this.redis, keys.list(r.appId, r.shardId), keys.pushMark(r.appId, r.shardId), keys.limitMark(r.appId, r.shardId), r.maxId),
    );
  }

  /** One script per shard (list-limits.ts), RETIRE_BATCH in flight at a time. */
  applyLimits(appId: number, shards: ReadonlyArray<{ shardId: number; maxIndex: bigint | null }>): Promise<number> {
    const keys = this.keys;
    return sumInBatches(shards, (s) =>
      applyLimit(this.redis, keys.list(appId, s.shardId), keys.limitMark(appId, s.shardId), keys.pushMark(appId, s.shardId), s.maxIndex),
    );
  }

  /**
   * On one server one script per LIMITS_PER_SCRIPT shards (list-limits.ts: readLimits), one after
   * the other; on a Cluster one script per shard, RETIRE_BATCH in flight at a time.
   */
  async storedLimits(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<Array<StoredLimit | null>> {
    const out: Array<StoredLimit | null> = [];
    const redis = this.redis;
    if (!(redis instanceof Cluster)) {
      for (let i = 0; i < shards.length; i += LIMITS_PER_SCRIPT) {
        out.push(...(await readLimits(redis, shards.slice(i, i + LIMITS_PER_SCRIPT).map((s) => this.keys.limitMark(s.appId, s.shardId)))));
      }
      return out;
    }
    for (let i = 0; i < shards.length; i += RETIRE_BATCH) {
      out.push(...(await Promise.all(shards.slice(i, i + RETIRE_BATCH).map((s) => readLimit(this.redis, this.keys.limitMark(s.appId, s.shardId))))));
    }
    return out;
  }

  async dropStoredLimit(appId: number, shardId: number, seen: StoredLimit, readAgoMs: number): Promise<boolean> {
    return (await dropLimit(this.redis, this.keys.limitMark(appId, shardId), seen, readAgoMs)) === 1;
  }

  deleteLists(appId: number, shardIds: Iterable<number>): Promise<number> {
    return deleteKeys(
      this.redis,
      [...shardIds].map((s) => this.keys.list(appId, s)),
    );
  }
}

/** The sum of `run` over every item, RETIRE_BATCH calls in flight at a time (the next batch after the last). */
async function sumInBatches<T>(items: readonly T[], run: (item: T) => Promise<number>): Promise<number> {
  let sum = 0;
  for (let i = 0; i < items.length; i += RETIRE_BATCH) {
    const counts = await Promise.all(items.slice(i, i + RETIRE_BATCH).map(run));
    sum += counts.reduce<number>((a, b) => a + Number(b), 0);
  }
  return sum;
}
