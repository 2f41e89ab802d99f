import { QueueLists, StoredLimit } from '../../../src/queue-id/core/queue-lists';

const text = (entries: readonly Uint8Array[]): string[] => entries.map((e) => Buffer.from(e).toString('latin1'));

/** Lists to test, and a way to write a list's marker as another writer would (any string). */
export interface ContractLists {
  lists: QueueLists;
  setMarker(appId: number, shardId: number, raw: string): Promise<void>;
}

/**
 * The semantics every QueueLists keeps (core/queue-lists.ts), as one suite: run against the
 * in-memory fake (unit) and against RedisQueueLists on a real Redis (integration), so the fake
 * the service tests rely on cannot drift from the real lists. `make` gives lists with nothing
 * in them (no list, no marker) for app 1.
 */
export function queueListsContract(make: () => ContractLists): void {
  let lists: QueueLists;
  let setMarker: ContractLists['setMarker'];
  beforeEach(() => {
    ({ lists, setMarker } = make());
  });

  it('reads the marker as stored; one that is not an index (corrupt, or not ours) refuses every push', async () => {
    expect(await lists.pushMark(1, 12)).toBeNull();
    expect(await lists.pushSegment(1, 12, 1n, 5n)).toEqual({ pushed: 5 });
    expect(await lists.pushMark(1, 12)).toBe('5');
    for (const raw of ['562949953421312', 'not-a-number', '1e3', '']) {
      await setMarker(1, 12, raw);
      expect(await lists.pushMark(1, 12)).toBe(raw);
      expect(await lists.pushSegment(1, 12, 6n, 9n)).toEqual({ pushed: 0, invalidMark: raw });
      expect(await lists.pushSegment(1, 12, 100n, 200n, 150n)).toEqual({ pushed: 0, invalidMark: raw });
    }
    expect(await lists.length(1, 12)).toBe(5);
    // Fixed by an operator: pushes go on above it.
    await setMarker(1, 12, '5');
    expect(await lists.pushSegment(1, 12, 6n, 9n)).toEqual({ pushed: 4 });
  });

  it('is FIFO: pops of up to n from the head, with the length the pop left', async () => {
    expect(await lists.pushSegment(1, 0, 1n, 5n)).toEqual({ pushed: 5 });
    expect(await lists.pushSegment(1, 0, 6n, 7n)).toEqual({ pushed: 2 });
    expect(text(await lists.pop(1, 0, 1))).toEqual(['1']);
    expect(text(await lists.pop(1, 0, 2))).toEqual(['2', '3']);
    const one = await lists.popThenLength(1, 0, 1);
    expect({ entries: text(one.entries), length: one.length }).toEqual({ entries: ['4'], length: 3 });
    const rest = await lists.popThenLength(1, 0, 10);
    expect({ entries: text(rest.entries), length: rest.length }).toEqual({ entries: ['5', '6', '7'], length: 0 });
    expect(await lists.pop(1, 0, 1)).toEqual([]);
    expect((await lists.popThenLength(1, 0, 3)).entries).toEqual([]);
    expect(await lists.length(1, 0)).toBe(0);
  });

  it('pops a batch as indexes: in order, over-limit entries dropped and flagged, with or without the length', async () => {
    expect(await lists.pushSegment(1, 10, 1n, 8n)).toEqual({ pushed: 8 });
    expect(await lists.popIndexes(1, 10, 3, 100n, true)).toEqual({ indexes: [1, 2, 3], overLimit: false, malformed: 0, length: 5 });
    expect(await lists.popIndexes(1, 10, 3, 5n, false)).toEqual({ indexes: [4, 5], overLimit: true, malformed: 0, length: -1 });
    expect(await lists.popIndexes(1, 10, 10, 100n, true)).toEqual({ indexes: [7, 8], overLimit: false, malformed: 0, length: 0 });
    // No list: nothing popped.
    expect(await lists.popIndexes(1, 10, 5, 100n, true)).toEqual({ indexes: [], overLimit: false, malformed: 0, length: 0 });
    expect(await lists.popIndexes(1, 10, 5, 100n, false)).toEqual({ indexes: [], overLimit: false, malformed: 0, length: -1 });
  });

  it('pushes a segment at most once: the same, an overlapping or an older one is refused', async () => {
    expect(await lists.pushSegment(1, 1, 1n, 5n)).toEqual({ pushed: 5 });
    expect(await lists.pushSegment(1, 1, 1n, 5n)).toEqual({ pushed: 0, refusedAt: { from: 1n, mark: 5n } });
    expect(await lists.pushSegment(1, 1, 5n, 9n)).toEqual({ pushed: 0, refusedAt: { from: 5n, mark: 5n } });
    expect(await lists.pushSegment(1, 1, 3n, 4n)).toMatchObject({ pushed: 0 });
    expect(await lists.pushSegment(1, 1, 6n, 6n)).toEqual({ pushed: 1 });
    expect(text(await lists.pop(1, 1, 10))).toEqual(['1', '2', '3', '4', '5', '6']);
    // Popping does not lower the marker.
    expect(await lists.pushSegment(1, 1, 6n, 8n)).toMatchObject({ pushed: 0 });
  });

  it('claims a whole segment and queues only its tail when asked (the head is the caller\'s to hand out)', async () => {
    expect(await lists.pushSegment(1, 11, 1n, 10n, 4n)).toEqual({ pushed: 7 });
    expect(text(await lists.pop(1, 11, 20))).toEqual(['4', '5', '6', '7', '8', '9', '10']);
    // The head 1..3 is claimed too: no segment reaching into it is queued again.
    expect(await lists.pushSegment(1, 11, 2n, 3n)).toEqual({ pushed: 0, refusedAt: { from: 2n, mark: 10n } });
    // A claim of the whole segment, nothing queued.
    expect(await lists.pushSegment(1, 11, 11n, 12n, 13n)).toEqual({ pushed: 0 });
    expect(await lists.length(1, 11)).toBe(0);
    expect(await lists.pushSegment(1, 11, 12n, 12n)).toMatchObject({ pushed: 0, refusedAt: { mark: 12n } });
    expect(await lists.pushSegment(1, 11, 13n, 14n, 13n)).toEqual({ pushed: 2 });
  });

  it('retires a list: deleted, its marker raised to the tombstone and never lowered', async () => {
    await lists.pushSegment(1, 2, 1n, 5n);
    expect(await lists.retire([{ appId: 1, shardId: 2, maxId: 20n }])).toBe(1);
    expect(await lists.length(1, 2)).toBe(0);
    expect(await lists.pushSegment(1, 2, 11n, 20n)).toEqual({ pushed: 0, refusedAt: { from: 11n, mark: 20n } });
    expect(await lists.pushSegment(1, 2, 21n, 22n)).toEqual({ pushed: 2 });
    // A retire with a lower tombstone (a resent step of an older delete) keeps the marker at 22.
    expect(await lists.retire([{ appId: 1, shardId: 2, maxId: 10n }])).toBe(1);
    expect(await lists.pushSegment(1, 2, 22n, 23n)).toMatchObject({ pushed: 0 });
    // Retiring a shard that never had a list only sets its marker.
    expect(await lists.retire([{ appId: 1, shardId: 3, maxId: 7n }])).toBe(0);
    expect(await lists.pushSegment(1, 3, 7n, 8n)).toMatchObject({ pushed: 0 });
    expect(await lists.pushSegment(1, 3, 8n, 8n)).toEqual({ pushed: 1 });
  });

  it('a lowered limit deletes the list and refuses every push reaching above it; raised, pushes go on; a retire forgets it', async () => {
    await lists.pushSegment(1, 13, 1n, 5n);
    expect(await lists.applyLimits(1, [{ shardId: 13, maxIndex: 4n }, { shardId: 14, maxIndex: 4n }])).toBe(1);
    expect(await lists.length(1, 13)).toBe(0);
    expect(await lists.pushSegment(1, 13, 6n, 10n)).toEqual({ pushed: 0, limitedAt: 4n });
    expect(await lists.applyLimits(1, [{ shardId: 13, maxIndex: 8n }])).toBe(0);
    // Refused before the marker moves: a segment within the limit still goes.
    expect(await lists.pushSegment(1, 13, 6n, 8n)).toEqual({ pushed: 3 });
    expect(await lists.applyLimits(1, [{ shardId: 13, maxIndex: null }])).toBe(0);
    expect(await lists.length(1, 13)).toBe(3);
    expect(await lists.pushSegment(1, 13, 9n, 20n)).toEqual({ pushed: 12 });
    await lists.retire([{ appId: 1, shardId: 14, maxId: 2n }]);
    expect(await lists.pushSegment(1, 14, 3n, 30n)).toEqual({ pushed: 28 });
  });

  it('a limit keeps the list when nothing above it went through it, and when it was stored already (a repeated PATCH)', async () => {
    await lists.pushSegment(1, 16, 1n, 5n);
    expect(await lists.applyLimits(1, [{ shardId: 16, maxIndex: 5n }])).toBe(0);
    expect(await lists.length(1, 16)).toBe(5);
    expect(await lists.applyLimits(1, [{ shardId: 16, maxIndex: 5n }])).toBe(0);
    // Indexes above it reach a list only through a push the limit did not guard (before it was stored).
    await lists.applyLimits(1, [{ shardId: 16, maxIndex: null }]);
    await lists.pushSegment(1, 16, 6n, 9n);
    expect(await lists.applyLimits(1, [{ shardId: 16, maxIndex: 5n }])).toBe(1);
    expect(await lists.applyLimits(1, [{ shardId: 16, maxIndex: 5n }])).toBe(0);
  });

  it('reads the stored limits, and deletes one only if it was not stored again since it was read', async () => {
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    await lists.applyLimits(1, [{ shardId: 17, maxIndex: 9n }]);
    await pause();
    const [seen, none] = await lists.storedLimits([
      { appId: 1, shardId: 17 },
      { appId: 1, shardId: 18 },
    ]);
    expect(none).toBeNull();
    expect(seen?.maxIndex).toBe(9n);
    await pause();
    // Stored again (a PATCH after the read): kept.
    await lists.applyLimits(1, [{ shardId: 17, maxIndex: 9n }]);
    expect(await lists.dropStoredLimit(1, 17, seen as StoredLimit, 1)).toBe(false);
    await pause();
    const [again] = await lists.storedLimits([{ appId: 1, shardId: 17 }]);
    expect(await lists.dropStoredLimit(1, 17, again as StoredLimit, 1)).toBe(true);
    expect(await lists.storedLimits([{ appId: 1, shardId: 17 }])).toEqual([null]);
    // Dropped, the limit refuses nothing.
    expect(await lists.pushSegment(1, 17, 1n, 20n)).toEqual({ pushed: 20 });
  });

  it('raises the marker over a range handed out without the list, never lowers it, leaves one that is not an index', async () => {
    expect(await lists.raiseMarker(1, 15, 10n)).toBeNull();
    expect(await lists.pushMark(1, 15)).toBe('10');
    // A push of anything at or below the raised marker is refused: the range is never queued.
    expect(await lists.pushSegment(1, 15, 5n, 12n)).toMatchObject({ pushed: 0, refusedAt: { mark: 10n } });
    expect(await lists.raiseMarker(1, 15, 7n)).toBe('10');
    expect(await lists.pushMark(1, 15)).toBe('10');
    expect(await lists.raiseMarker(1, 15, 20n)).toBe('10');
    expect(await lists.pushMark(1, 15)).toBe('20');
    expect(await lists.pushSegment(1, 15, 21n, 22n)).toEqual({ pushed: 2 });
    await setMarker(1, 15, 'not-ours');
    expect(await lists.raiseMarker(1, 15, 30n)).toBe('not-ours');
    expect(await lists.pushMark(1, 15)).toBe('not-ours');
  });

  it('deletes lists, counting those that existed, and keeps their markers', async () => {
    await lists.pushSegment(1, 4, 1n, 3n);
    await lists.pushSegment(1, 5, 1n, 3n);
    expect(await lists.deleteLists(1, [4, 5, 6])).toBe(2);
    expect(await lists.lengths([{ appId: 1, shardId: 4 }, { appId: 1, shardId: 5 }])).toEqual([
      [null, 0],
      [null, 0],
    ]);
    expect(await lists.pushSegment(1, 4, 1n, 3n)).toMatchObject({ pushed: 0 });
  });

  it('reads the lengths of many lists in order (0 for one that does not exist)', async () => {
    await lists.pushSegment(1, 7, 1n, 3n);
    await lists.pushSegment(1, 9, 1n, 1n);
    const shards = [7, 8, 9].map((shardId) => ({ appId: 1, shardId }));
    expect(await lists.lengths(shards)).toEqual([
      [null, 3],
      [null, 0],
      [null, 1],
    ]);
  });

  it('reads the lengths and stored limits of more lists than one batch holds, in order', async () => {
    // 20 apps × 64 shards: more than one script (or pipeline) of 1,000 keys.
    const shards = Array.from({ length: 20 * 64 }, (_, i) => ({ appId: 30 + Math.floor(i / 64), shardId: i % 64 }));
    await lists.pushSegment(30, 2, 1n, 2n);
    await lists.pushSegment(49, 63, 1n, 3n);
    await lists.applyLimits(49, [{ shardId: 62, maxIndex: 7n }]);
    const lengths = await lists.lengths(shards);
    expect(lengths).toHaveLength(shards.length);
    expect(lengths.filter(([err]) => err !== null)).toEqual([]);
    expect(lengths[2]).toEqual([null, 2]);
    expect(lengths[shards.length - 1]).toEqual([null, 3]);
    expect(lengths.reduce((sum, [, n]) => sum + n, 0)).toBe(5);
    const limits = await lists.storedLimits(shards);
    expect(limits).toHaveLength(shards.length);
    expect(limits[shards.length - 2]?.maxIndex).toBe(7n);
    expect(limits.filter((l) => l !== null)).toHaveLength(1);
  });
}
