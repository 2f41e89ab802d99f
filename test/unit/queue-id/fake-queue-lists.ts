import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { readPushMarker } from '../../../src/queue-id/core/push-marker';
import { acceptEntries } from '../../../src/queue-id/core/queue-batch';
import {
  ListLength,
  PoppedEntries,
  PoppedIndexes,
  QueueLists,
  RetiredList,
  SegmentPushOutcome,
  StoredLimit,
} from '../../../src/queue-id/core/queue-lists';

interface Gate {
  promise: Promise<void>;
  open: () => void;
}

function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const shardKey = (appId: number, shardId: number): string => `${appId}/${shardId}`;

/**
 * The queue's lists in memory, with the semantics of RedisQueueLists: FIFO lists of decimal
 * strings (popped as bytes, as Redis returns them), a "pushed up to" marker per list that
 * refuses a push of the same or an older segment, retire deleting the list and raising the
 * marker (never lowering it), pops of up to n and the length after a pop. A list emptied by pops
 * no longer exists (Redis deletes empty lists: DEL of it counts 0).
 *
 * Test controls: `fail` makes every call throw (Redis down); `holdPushes()` makes the next pushes
 * wait until `releasePushes()`; `confirmsPops` and `unconfirmed` play REDIS_WAIT_REPLICAS with
 * replicas that confirm or do not.
 */
export class FakeQueueLists implements QueueLists {
  private readonly lists = new Map<string, string[]>();
  private readonly marks = new Map<string, bigint>();
  /** Markers written as raw strings (setRawMarker), over `marks`: possibly not an index. */
  private readonly rawMarks = new Map<string, string>();
  /** Stored limits (applyLimits): the highest index a push may reach (no expiry here). */
  private readonly limits = new Map<string, bigint>();
  /** When each limit was stored, as a count of stores: a later store "has more TTL left". */
  private readonly limitStores = new Map<string, number>();
  private stores = 0;
  confirmsPops = false;
  /** Confirmed pops are not confirmed by the replicas: their entries are dropped, QUEUE_NOT_REPLICATED. */
  unconfirmed = false;
  fail: Error | null = null;
  /** Every push asked for, in order, refused or not. */
  readonly pushes: Array<{ appId: number; shardId: number; from: bigint; to: bigint; pushFrom: bigint; refused: boolean }> = [];
  /** Pushes waiting for `releasePushes` (resolves when one arrives there). */
  private pushGate: Gate | null = null;
  private pushArrived: Gate = gate();
  private epoch = 0;

  /** The list as decimal strings, head first (a copy). */
  entries(appId: number, shardId: number): string[] {
    return [...(this.lists.get(shardKey(appId, shardId)) ?? [])];
  }

  /** The list's entries as bigint indexes (every entry must be a decimal index). */
  indexes(appId: number, shardId: number): bigint[] {
    return this.entries(appId, shardId).map((e) => BigInt(e));
  }

  /** The "pushed up to" marker, or undefined when never set. */
  marker(appId: number, shardId: number): bigint | undefined {
    return this.marks.get(shardKey(appId, shardId));
  }

  /** Appends raw entries (any string: a malformed one too) without touching the marker. */
  append(appId: number, shardId: number, ...entries: string[]): void {
    const key = shardKey(appId, shardId);
    this.lists.set(key, [...(this.lists.get(key) ?? []), ...entries]);
  }

  /**
   * From now on every claim first finds the marker a step above its segment (`to + 10`), as if
   * another writer on the same key prefix kept getting there first: every push is refused.
   */
  keepMarkerAhead(): void {
    const claim = this.pushSegment.bind(this);
    this.pushSegment = async (appId, shardId, from, to, pushFrom) => {
      this.setMarker(appId, shardId, to + 10n);
      return claim(appId, shardId, from, to, pushFrom);
    };
  }

  /** Sets the marker directly (another deployment's or an earlier push's trace). */
  setMarker(appId: number, shardId: number, mark: bigint): void {
    this.setRawMarker(appId, shardId, mark.toString());
  }

  /** Writes the marker as any string (a corrupt one, another deployment's); null deletes it. */
  setRawMarker(appId: number, shardId: number, raw: string | null): void {
    const key = shardKey(appId, shardId);
    this.marks.delete(key);
    this.rawMarks.delete(key);
    const marker = readPushMarker(raw);
    if (marker.kind === 'index') {
      this.marks.set(key, marker.mark);
    } else if (raw !== null) {
      this.rawMarks.set(key, raw);
    }
  }

  async pushMark(appId: number, shardId: number): Promise<string | null> {
    this.check();
    const key = shardKey(appId, shardId);
    return this.rawMarks.get(key) ?? this.marks.get(key)?.toString() ?? null;
  }

  async raiseMarker(appId: number, shardId: number, to: bigint): Promise<string | null> {
    this.check();
    const key = shardKey(appId, shardId);
    const before = this.rawMarks.get(key) ?? this.marks.get(key)?.toString() ?? null;
    const mark = this.marks.get(key);
    if (!this.rawMarks.has(key) && (mark === undefined || mark < to)) {
      this.marks.set(key, to);
    }
    return before;
  }

  holdPushes(): void {
    this.pushGate = gate();
  }

  releasePushes(): void {
    const held = this.pushGate;
    this.pushGate = null;
    held?.open();
  }

  /** Resolves once a push is waiting at the gate of `holdPushes`. */
  pushWaiting(): Promise<void> {
    return this.pushArrived.promise;
  }

  /** A reconnect of the connection that popped: confirmations of pops made before it fail. */
  reconnect(): void {
    this.epoch++;
  }

  async pop(appId: number, shardId: number, n: number): Promise<Uint8Array[]> {
    this.check();
    return this.take(appId, shardId, n);
  }

  async popThenLength(appId: number, shardId: number, n: number): Promise<PoppedEntries> {
    this.check();
    const entries = this.take(appId, shardId, n);
    return { entries, length: this.size(appId, shardId) };
  }

  async popIndexes(appId: number, shardId: number, n: number, maxIndex: bigint, withLength: boolean): Promise<PoppedIndexes> {
    this.check();
    const entries = this.take(appId, shardId, n);
    const indexes: number[] = [];
    const { overLimit, malformed } = acceptEntries(entries, maxIndex, indexes);
    return { indexes, overLimit, malformed, length: withLength ? this.size(appId, shardId) : -1 };
  }

  async popConfirmed(appId: number, shardId: number, n: number, withLength: boolean): Promise<PoppedEntries> {
    this.check();
    const entries = this.take(appId, shardId, n);
    if (entries.length > 0 && this.unconfirmed) {
      throw new IdGenError(ErrorKind.QueueNotReplicated, 'the replicas did not confirm the pop; its IDs were dropped, retry');
    }
    return { entries, length: withLength ? this.size(appId, shardId) : -1 };
  }

  confirmMark(): number {
    return this.epoch;
  }

  async confirmPops(_appId: number, _shardId: number, mark: number): Promise<void> {
    this.check();
    if (this.unconfirmed || mark !== this.epoch) {
      throw new IdGenError(ErrorKind.QueueNotReplicated, 'the replicas did not confirm the pops; their IDs were dropped, retry');
    }
  }

  async length(appId: number, shardId: number): Promise<number> {
    this.check();
    return this.size(appId, shardId);
  }

  async lengths(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<ListLength[]> {
    return shards.map((s): ListLength => (this.fail ? [this.fail, 0] : [null, this.size(s.appId, s.shardId)]));
  }

  async pushSegment(appId: number, shardId: number, from: bigint, to: bigint, pushFrom: bigint = from): Promise<SegmentPushOutcome> {
    this.check();
    if (this.pushGate) {
      const arrived = this.pushArrived;
      this.pushArrived = gate();
      arrived.open();
      await this.pushGate.promise;
    }
    const key = shardKey(appId, shardId);
    const invalid = this.rawMarks.get(key);
    const mark = this.marks.get(key) ?? -1n;
    const refused = invalid !== undefined || mark >= from;
    this.pushes.push({ appId, shardId, from, to, pushFrom, refused });
    if (invalid !== undefined) {
      return { pushed: 0, invalidMark: invalid };
    }
    const limit = this.limits.get(key);
    if (limit !== undefined && mark < from && to > limit) {
      return { pushed: 0, limitedAt: limit };
    }
    if (refused) {
      return { pushed: 0, refusedAt: { from, mark } };
    }
    const list = this.lists.get(key) ?? [];
    const first = pushFrom > from ? pushFrom : from;
    for (let i = first; i <= to; i++) {
      list.push(i.toString());
    }
    this.lists.set(key, list);
    this.marks.set(key, to);
    return { pushed: first <= to ? Number(to - first + 1n) : 0 };
  }

  async retire(shards: readonly RetiredList[]): Promise<number> {
    this.check();
    let deleted = 0;
    for (const r of shards) {
      const key = shardKey(r.appId, r.shardId);
      deleted += this.delete(key);
      // As the retire script: a marker that is not a number is replaced by the tombstone.
      this.rawMarks.delete(key);
      this.limits.delete(key);
      const mark = this.marks.get(key);
      if (mark === undefined || mark < r.maxId) {
        this.marks.set(key, r.maxId);
      }
    }
    return deleted;
  }

  async applyLimits(appId: number, shards: ReadonlyArray<{ shardId: number; maxIndex: bigint | null }>): Promise<number> {
    this.check();
    let deleted = 0;
    for (const { shardId, maxIndex } of shards) {
      const key = shardKey(appId, shardId);
      if (maxIndex === null) {
        this.limits.delete(key);
        continue;
      }
      const again = this.limits.get(key) === maxIndex;
      this.limits.set(key, maxIndex);
      this.limitStores.set(key, ++this.stores);
      const mark = this.marks.get(key);
      if (!again && (this.rawMarks.has(key) || mark === undefined || mark > maxIndex)) {
        deleted += this.delete(key);
      }
    }
    return deleted;
  }

  /** Stores a limit directly (as a PATCH whose raise then failed in Redis would leave it). */
  setStoredLimit(appId: number, shardId: number, maxIndex: bigint): void {
    const key = shardKey(appId, shardId);
    this.limits.set(key, maxIndex);
    this.limitStores.set(key, ++this.stores);
  }

  storedLimit(appId: number, shardId: number): bigint | undefined {
    return this.limits.get(shardKey(appId, shardId));
  }

  async storedLimits(shards: ReadonlyArray<{ appId: number; shardId: number }>): Promise<Array<StoredLimit | null>> {
    this.check();
    return shards.map((s) => {
      const key = shardKey(s.appId, s.shardId);
      const maxIndex = this.limits.get(key);
      return maxIndex === undefined ? null : { maxIndex, ttlLeftMs: this.limitStores.get(key) ?? 0 };
    });
  }

  /** Exact here: a store since the read (a later count) is kept, whatever `readAgoMs`. */
  async dropStoredLimit(appId: number, shardId: number, seen: StoredLimit, _readAgoMs: number): Promise<boolean> {
    this.check();
    const key = shardKey(appId, shardId);
    if (this.limits.get(key) !== seen.maxIndex || (this.limitStores.get(key) ?? 0) > seen.ttlLeftMs) {
      return false;
    }
    this.limits.delete(key);
    return true;
  }

  async deleteLists(appId: number, shardIds: Iterable<number>): Promise<number> {
    this.check();
    let deleted = 0;
    for (const shardId of shardIds) {
      deleted += this.delete(shardKey(appId, shardId));
    }
    return deleted;
  }

  private check(): void {
    if (this.fail) {
      throw this.fail;
    }
  }

  private size(appId: number, shardId: number): number {
    return this.lists.get(shardKey(appId, shardId))?.length ?? 0;
  }

  private take(appId: number, shardId: number, n: number): Uint8Array[] {
    const key = shardKey(appId, shardId);
    const list = this.lists.get(key) ?? [];
    const taken = list.splice(0, n);
    if (list.length === 0) {
      this.lists.delete(key);
    }
    return taken.map((e) => Buffer.from(e, 'latin1'));
  }

  /** 1 when the list existed (held at least one entry), as Redis's DEL counts. */
  private delete(key: string): number {
    const existed = (this.lists.get(key)?.length ?? 0) > 0;
    this.lists.delete(key);
    return existed ? 1 : 0;
  }
}
