import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { MAX_INDEX, composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { ShardRefill, RefillRequest } from '../../../src/queue-id/refill/shard-refill';
import { QueueLocks } from '../../../src/queue-id/queue-locks';
import { heldSegmentAllocation } from '../../support/held-allocations';
import { RefillMonitor } from '../../../src/queue-id/refill-monitor';
import { errorKindOf, flush, queueFixture, span } from './queue-fixture';

const APP = 1;
const SHARD = 5;
/** A sweep-like refill: skipped when the list holds anything, no waiting for the lock. */
const ONCE: RefillRequest = { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 };

const asIndexes = (raw: ReadonlyArray<string | Uint8Array>): bigint[] =>
  raw.map((e) => BigInt(typeof e === 'string' ? e : Buffer.from(e).toString('latin1')));

describe('the refill: ShardRefill, OnDemandTake, LowListSweep (in-memory lists, id_alloc and locks)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('two refills of one shard at once: one fills the list, the other finds the lock taken', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.repo.holdAllocations();
    const first = f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE);
    await flush();
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'busy', pushed: 0 });
    f.repo.releaseAllocations();
    expect(await first).toEqual({ status: 'refilled', pushed: 10 });
    expect(f.repo.allocations).toHaveLength(1);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(1, 10));
  });

  it('a refill that waited for the lock finds the list refilled and allocates nothing', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.repo.holdAllocations();
    const first = f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE);
    await flush();
    const second = f.shardRefill.refill({ appId: APP, shardId: SHARD }, { ...ONCE, lockRetries: 40 });
    await flush();
    f.repo.releaseAllocations();
    expect(await first).toEqual({ status: 'refilled', pushed: 10 });
    expect(await second).toEqual({ status: 'sufficient', pushed: 0 });
    expect(f.repo.allocations).toHaveLength(1);
  });

  it('an on-demand refill while another refill holds the lock waits, then takes from what that one pushed', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.repo.holdAllocations();
    const refill = f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE);
    await flush();
    const contended = f.locks.contended(f.keys.lock(APP, SHARD));
    const take = f.demand.take({ appId: APP, shardId: SHARD }, 3);
    await contended;
    f.repo.releaseAllocations();
    await refill;
    const taken = await take;
    expect(taken.status).toBe('taken');
    expect(asIndexes(taken.indexes)).toEqual([1n, 2n, 3n]);
    expect(f.repo.allocations).toHaveLength(1);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(4, 10));
  });

  it('an on-demand refill whose lock stays held elsewhere takes from a segment of its own and queues the rest', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.append(APP, SHARD, '1');
    await f.repo.allocate(APP, SHARD, 1); // 1..10: the queued '1' came from it
    f.locks.hold(f.keys.lock(APP, SHARD));
    const taken = await f.demand.take({ appId: APP, shardId: SHARD }, 3);
    expect(f.locks.busy).toBe(1);
    expect(taken.status).toBe('taken');
    // The queued index first, then the new segment's first two; its rest queued.
    expect(asIndexes(taken.indexes)).toEqual([1n, 11n, 12n]);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(13, 20));
  });

  it('a push refused by the marker (the app deleted between allocation and push) leaves its segment as a gap', async () => {
    const f = queueFixture();
    const refusals: string[] = [];
    f.monitor.subscribeRefusals((reason) => refusals.push(reason));
    await f.addApp(APP, 10);
    f.lists.holdPushes();
    const refill = f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE);
    await f.lists.pushWaiting();
    // The admin delete commits (tombstone 10) and retires the lists: the marker goes to 10.
    await f.repo.retireApp(APP);
    await f.queueConfig.cleanUpRetiredLists();
    f.lists.releasePushes();
    // Refused, then allocated again: the row is gone with the app.
    expect(await refill).toEqual({ status: 'missing', pushed: 0 });
    expect(f.lists.pushes).toEqual([{ appId: APP, shardId: SHARD, from: 1n, to: 10n, pushFrom: 1n, refused: true }]);
    expect(f.lists.entries(APP, SHARD)).toEqual([]);
    expect(f.lists.marker(APP, SHARD)).toBe(10n);
    // The marker at the segment's end: an ordinary refusal, the row is not moved.
    expect(refusals).toEqual(['older']);
  });

  it('an on-demand refill claims its whole segment before handing any of it out: a refused one is a gap, the next is served', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    // The list already went up to 10 (handed out before): 1..10 must not be served again.
    f.lists.setMarker(APP, SHARD, 10n);
    const taken = await f.demand.take({ appId: APP, shardId: SHARD }, 2);
    expect(taken.status).toBe('taken');
    expect(asIndexes(taken.indexes)).toEqual([11n, 12n]);
    expect(f.lists.pushes).toEqual([
      { appId: APP, shardId: SHARD, from: 1n, to: 10n, pushFrom: 3n, refused: true },
      { appId: APP, shardId: SHARD, from: 11n, to: 20n, pushFrom: 13n, refused: false },
    ]);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(13, 20));
    expect(f.lists.marker(APP, SHARD)).toBe(20n);
  });

  it('an on-demand refill that takes a whole segment still claims it (the marker moves, nothing is queued)', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    const taken = await f.demand.take({ appId: APP, shardId: SHARD }, 10);
    expect(asIndexes(taken.indexes)).toEqual(span(1, 10));
    expect(f.lists.pushes).toEqual([{ appId: APP, shardId: SHARD, from: 1n, to: 10n, pushFrom: 11n, refused: false }]);
    expect(f.lists.entries(APP, SHARD)).toEqual([]);
    expect(f.lists.marker(APP, SHARD)).toBe(10n);
  });

  it('id_alloc behind the list (a restored database): the refused refill moves max_id past the marker and refills above it', async () => {
    const f = queueFixture();
    const refusals: string[] = [];
    f.monitor.subscribeRefusals((reason) => refusals.push(reason));
    await f.addApp(APP, 10);
    f.lists.setMarker(APP, SHARD, 1_000_000n);
    // Not a million refused refills one step at a time: one refused, the row moved, the next served.
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'refilled', pushed: 10 });
    expect(f.lists.pushes.map((p) => [p.from, p.to, p.refused])).toEqual([
      [1n, 10n, true],
      [1_000_001n, 1_000_010n, false],
    ]);
    // Counted apart from an ordinary refusal (shardleaf_queue_pushes_refused_total{reason}).
    expect(refusals).toEqual(['row_behind']);
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(1_000_010n);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(1_000_001, 1_000_010));
    // An on-demand refill of another shard in the same state serves from above its marker at once.
    f.lists.setMarker(APP, 6, 5_000n);
    const taken = await f.demand.take({ appId: APP, shardId: 6 }, 3);
    expect(taken.status).toBe('taken');
    expect(asIndexes(taken.indexes)).toEqual([5_001n, 5_002n, 5_003n]);
    expect(f.repo.row(APP, 6)?.maxId).toBe(5_010n);
  });

  it('an on-demand refill and a sweep refill refused twice (a marker that keeps moving ahead) hand out nothing and say refused', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.keepMarkerAhead();
    const taken = await f.demand.take({ appId: APP, shardId: SHARD }, 2);
    expect(taken).toEqual({ status: 'refused', indexes: [] });
    // Two attempts, each row moved past the marker it met: 1..10 → 20, then 21..30 → 40.
    expect(f.lists.pushes.map((p) => [p.from, p.to, p.refused])).toEqual([
      [1n, 10n, true],
      [21n, 30n, true],
    ]);
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(40n);
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'refused', pushed: 0 });
    expect(f.lists.pushes).toHaveLength(4);
    expect(f.lists.entries(APP, SHARD)).toEqual([]);
  });

  it.each([
    ['above every index (2^49)', (MAX_INDEX + 1n).toString()],
    ['not a number', 'garbage'],
  ])('a marker %s refuses the shard before id_alloc moves, never followed; once deleted the shard refills', async (_name, raw) => {
    const f = queueFixture();
    const refusals: string[] = [];
    f.monitor.subscribeRefusals((reason) => refusals.push(reason));
    await f.addApp(APP, 10);
    f.lists.setRawMarker(APP, SHARD, raw);
    expect(await errorKindOf(f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE))).toBe(ErrorKind.QueueMarkerInvalid);
    expect(await errorKindOf(f.demand.take({ appId: APP, shardId: SHARD }, 3))).toBe(ErrorKind.QueueMarkerInvalid);
    // The sweep refills the app's other 63 shards, not this one.
    expect(await f.sweep.run()).toMatchObject({ refilled: 63, failed: 1 });
    expect(f.repo.allocations.filter((a) => a.shardId === SHARD)).toHaveLength(0);
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(0n);
    expect(refusals).toEqual(['marker_invalid', 'marker_invalid', 'marker_invalid']);
    // An operator deletes the key: the shard refills, no restart.
    f.lists.setRawMarker(APP, SHARD, null);
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'refilled', pushed: 10 });
  });

  it('a marker made invalid between the check and the claim costs that one segment (a gap), and the refill stops there', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.holdPushes();
    const refill = f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE);
    await f.lists.pushWaiting();
    f.lists.setRawMarker(APP, SHARD, 'not-ours');
    f.lists.releasePushes();
    expect(await errorKindOf(refill)).toBe(ErrorKind.QueueMarkerInvalid);
    // One allocation, not a second one.
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(10n);
    expect(await f.lists.length(APP, SHARD)).toBe(0);
  });

  it('a marker above max_limit_id moves the row to the limit only', async () => {
    const g = queueFixture();
    await g.addApp(APP, 10, composeQueueId(25n, SHARD, APP));
    g.lists.setMarker(APP, SHARD, 1_000n);
    // 1..10 refused; the row goes to the limit (25), not to 1,000; nothing is left to allocate.
    expect(await g.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'exhausted', pushed: 0 });
    expect(g.repo.row(APP, SHARD)?.maxId).toBe(25n);
  });

  it('stops at max_limit_id: the last segment is cut there, then the shard is exhausted', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10, composeQueueId(15n, SHARD, APP));
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, ONCE)).toEqual({ status: 'refilled', pushed: 10 });
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, { ...ONCE, skipIfAtLeast: 100 })).toEqual({ status: 'refilled', pushed: 5 });
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, { ...ONCE, skipIfAtLeast: 100 })).toEqual({ status: 'exhausted', pushed: 0 });
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(1, 15));
    const taken = await f.demand.take({ appId: APP, shardId: 6 }, 20);
    expect(taken.status).toBe('exhausted');
  });

  it('answers missing for a shard without an id_alloc row', async () => {
    const f = queueFixture();
    expect(await f.shardRefill.refill({ appId: 9, shardId: SHARD }, ONCE)).toEqual({ status: 'missing', pushed: 0 });
    expect(await f.demand.take({ appId: 9, shardId: SHARD }, 1)).toEqual({ status: 'missing', indexes: [] });
  });

  it('the sweep refills the lists at or below the idle ratio only, and counts the busy and failed ones', async () => {
    const f = queueFixture({ QUEUE_IDLE_RATIO: '0.2' });
    await f.addApp(APP, 10);
    f.lists.append(APP, 1, '1', '2', '3'); // above 0.2 × 10: left alone
    f.lists.append(APP, 2, '1', '2'); // at it: refilled
    f.locks.hold(f.keys.lock(APP, 3));
    const sweep = await f.sweep.run();
    expect(sweep).toEqual({ checked: 64, refilled: 62, busy: 1, exhausted: 0, failed: 0 });
    expect(f.lists.entries(APP, 1)).toEqual(['1', '2', '3']);
    expect(f.lists.entries(APP, 2)).toHaveLength(12);
    expect(f.lists.entries(APP, 3)).toEqual([]);
    f.lists.fail = new Error('connect ECONNREFUSED');
    expect(await f.sweep.run()).toMatchObject({ checked: 64, refilled: 0, failed: 64 });
  });

  it('a held SegmentAllocation (what the chaos suite substitutes) holds a refill between its allocation and its push', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    const Held = heldSegmentAllocation(1500);
    const segments = new Held(f.lists, f.keys, f.repo, f.registry, new RefillMonitor(), f.ahead);
    const held = new ShardRefill(new QueueLocks(f.config.queue, f.keys, f.locks), f.lists, segments);
    jest.useFakeTimers();
    const refill = held.refill({ appId: APP, shardId: SHARD }, ONCE);
    await flush();
    expect(f.repo.allocations).toHaveLength(1);
    expect(f.lists.pushes).toHaveLength(0);
    jest.advanceTimersByTime(1500);
    expect(await refill).toEqual({ status: 'refilled', pushed: 10 });
    // Without the hook (the fixture's service) the push follows the allocation at once.
    await f.shardRefill.refill({ appId: APP, shardId: 6 }, ONCE);
    expect(f.lists.pushes).toHaveLength(2);
  });
});
