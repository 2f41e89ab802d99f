/**
 * The queue's lists, one per (appId, shardId), each with a "pushed up to" marker: the highest
 * index ever pushed to it (or retired with its app). Framework-free: the services of the queue
 * feature use this port and nothing else of Redis; RedisQueueLists (redis-queue-lists.ts) is the
 * Nest provider behind it, and the unit tests use an in-memory fake with the same semantics.
 *
 * Semantics every implementation keeps:
 * - a list is FIFO: a pop takes from the head, a push appends at the tail;
 * - `pushSegment(from, to)` appends from..to only when the marker is below `from`, and then sets
 *   the marker to `to`; otherwise nothing is pushed (the segment becomes a gap, never a copy). A
 *   marker that is not an index (core/push-marker.ts: corrupt, or not ours) refuses every push;
 *   The marker is the highest index ever handed out through the list: pushed, or (an on-demand
 *   refill's first indexes) claimed with the push and served directly;
 * - `retire` deletes the list and raises its marker to the given max_id (never lowers it);
 * - a pop takes up to n entries; a "length" is the list's length after that pop.
 *
 * Uniqueness rests on the id_alloc row update (IdAllocRepository.allocate) and on the marker.
 * Every write here may be lost or have run without its reply arriving; none is ever sent again
 * (the Redis client rejects unanswered commands). Of the push, the step that may safely run twice
 * is the marker's claim; its RPUSH runs only after a claim succeeded (segment-push.ts,
 * docs/reliability.md "The two-step refill push").
 */

/** Entries popped (bytes: core/queue-batch.ts reads the digits) and the list's length after the pop. */
export interface PoppedEntries {
  entries: Uint8Array[];
  /** -1 when the length was not read (or its read failed). */
  length: number;
}

/**
 * A batch pop's entries read straight into indexes (core/queue-batch.ts acceptEntries' rules:
 * malformed entries and entries above the limit dropped), and the list's length after the pop.
 */
export interface PoppedIndexes {
  indexes: number[];
  /** An entry above the limit was dropped: the shard is exhausted. */
  overLimit: boolean;
  /** Entries that were not decimal indexes (dropped). */
  malformed: number;
  /** -1 when the length was not read (or its read failed). */
  length: number;
}

/** What a segment push did. */
export interface SegmentPushOutcome {
  /** Indexes pushed. */
  pushed: number;
  /** Set when a run was refused (the marker already at or past its first index): the rest is a gap. */
  refusedAt?: { from: bigint; mark: bigint };
  /** Set when refused because the marker is not an index (core/push-marker.ts): nothing pushed, a gap. */
  invalidMark?: string;
  /** Set when refused by the shard's stored limit (see `applyLimits`): nothing pushed, a gap. */
  limitedAt?: bigint;
}

/** A shard of a deleted app and the highest index it ever allocated (its tombstone). */
export interface RetiredList {
  appId: number;
  shardId: number;
  maxId: bigint;
}

/** A shard's limit stored in Redis (see `applyLimits`) as read by `storedLimits`. */
export interface StoredLimit {
  maxIndex: bigint;
  /** What is left of its TTL when read: a later store of the limit has more. */
  ttlLeftMs: number;
}

/** [error, length] per list, in the order asked; one failed read does not fail the others. */
export type ListLength = [Error | null, number];

/**
 * The port (an abstract class so that it is also the Nest injection token). Only the operations
 * the queue needs: pops, lengths, a segment push, delete and retire.
 */
export abstract class QueueLists {
  /** The request path's pop: up to n entries. */
  abstract pop(appId: number, shardId: number, n: number): Promise<Uint8Array[]>;

  /**
   * Up to n entries and the length read just after (refill-ahead's reading pops): not atomic, another
   * client's pop or push in between moves the length a little (the refill reads it again).
   */
  abstract popThenLength(appId: number, shardId: number, n: number): Promise<PoppedEntries>;

  /**
   * The request path's pop (pops not confirmed by replicas): up to n entries, returned as the indexes
   * acceptEntries would keep of them with this `maxIndex`, in order; with `withLength`, the length
   * read just after (as popThenLength: not atomic). On a standalone Redis this reads the reply's
   * bytes itself (pop-connection.ts); the entries are never returned as bytes.
   */
  abstract popIndexes(appId: number, shardId: number, n: number, maxIndex: bigint, withLength: boolean): Promise<PoppedIndexes>;

  /**
   * Failover protection (REDIS_WAIT_REPLICAS) is on: the request path pops with `popConfirmed`
   * and confirms the pops of an on-demand refill with `confirmPops`.
   *
   * Why here and not in QueueIdService: a pop is confirmed by Redis's WAIT, which counts the
   * replicas that have every write made *on the connection that sends it*. The pop and its WAIT
   * therefore go down one pipeline on one connection, and a reconnect in between (a failover)
   * makes the confirmation worthless. Connections are Redis's business, so the implementation
   * does it (replica-ack.service.ts); the port only says "confirmed or QUEUE_NOT_REPLICATED".
   */
  abstract readonly confirmsPops: boolean;

  /**
   * Up to n entries (and with `withLength` the length after the pop), returned only once the
   * configured replicas confirmed the pop. Unconfirmed entries are dropped (a gap) and
   * IdGenError(QueueNotReplicated) is thrown; a failed pop throws the backend's error.
   */
  abstract popConfirmed(appId: number, shardId: number, n: number, withLength: boolean): Promise<PoppedEntries>;

  /** A mark to pass to `confirmPops` for pops made after this moment. */
  abstract confirmMark(): number;

  /**
   * Throws IdGenError(QueueNotReplicated) unless every pop of the shard's list made since `mark`
   * is confirmed by the replicas.
   */
  abstract confirmPops(appId: number, shardId: number, mark: number): Promise<void>;

  /** The list's length. */
  abstract length(appId: number, shardId: number): Promise<number>;

  /** The list's "pushed up to" marker as stored (null when there is none); read with core/push-marker.ts. */
  abstract pushMark(appId: number, shardId: number): Promise<string | null>;

  /**
   * Raises the marker to `to` unless it is at or above it already (a marker that is not an index is
   * left as it is), atomically, and returns it as it was (null when there was none): a range handed
   * out without the list (a lease) is then covered by the marker like a pushed one.
   */
  abstract raiseMarker(appId: number, shardId: number, to: bigint): Promise<string | null>;

  /** The lengths of many lists, in order, in bounded batches. */
  abstract lengths(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<ListLength[]>;

  /**
   * Appends pushFrom..to (default: the whole segment) at most once (see above): the marker is
   * raised to `to` only when it is below `from`, else refused and nothing appended. The indexes
   * from..pushFrom−1 are claimed with the rest but not appended: the caller hands them out itself,
   * and only when this was not refused (an on-demand refill serving its request).
   */
  abstract pushSegment(appId: number, shardId: number, from: bigint, to: bigint, pushFrom?: bigint): Promise<SegmentPushOutcome>;

  /**
   * Per shard: deletes the list and raises its marker to `maxId`, atomically. Safe to repeat.
   * Returns how many lists existed.
   */
  abstract retire(shards: readonly RetiredList[]): Promise<number>;

  /**
   * A max_limit_id set by an admin, per shard: its highest index (lowered, or set again), or null
   * (raised or removed). A limit is stored for a while next to the list and, atomically, the list
   * is deleted (a gap) when it may hold an index above the limit: unless the same limit was stored
   * already, or nothing above it ever went through the list (its marker). From then on every push
   * reaching above it is refused or taken off again, on every instance, before their next reload.
   * Safe to repeat. Null: the stored limit is deleted. Returns the lists deleted.
   */
  abstract applyLimits(appId: number, shards: ReadonlyArray<{ shardId: number; maxIndex: bigint | null }>): Promise<number>;

  /** The limits stored for these shards (null where none is), in order. */
  abstract storedLimits(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<Array<StoredLimit | null>>;

  /**
   * Deletes a stored limit read by `storedLimits` `readAgoMs` ago (a margin for the way there
   * included), unless it was stored again since. True when deleted; a limit stored shortly before
   * the read may be kept (deleted by a later call).
   */
  abstract dropStoredLimit(appId: number, shardId: number, seen: StoredLimit, readAgoMs: number): Promise<boolean>;

  /** Deletes the lists of these shards of one app (markers kept). Returns how many existed. */
  abstract deleteLists(appId: number, shardIds: Iterable<number>): Promise<number>;
}
