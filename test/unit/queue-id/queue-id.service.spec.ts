import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { errorKindOf, flush, gatePassFor, indexesOf, queueFixture, span } from './queue-fixture';

const APP = 1;
const SHARD = 5;
const gatePass = gatePassFor(SHARD);

/** A max_limit_id that allows indexes up to `maxIndex` on SHARD of APP. */
const limitAt = (maxIndex: number): bigint => composeQueueId(BigInt(maxIndex), SHARD, APP);

describe('QueueIdService (in-memory lists and id_alloc)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('refills an empty list on demand: the request gets the first index, the rest of the step is queued in order', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([1n]);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(2, 10));
    expect(indexesOf(await f.service.get(APP, gatePass, 3), APP, SHARD)).toEqual([2n, 3n, 4n]);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(5, 10));
    expect(f.repo.allocations).toHaveLength(1);
  });

  it('writes a batch body with the same IDs in the same order as get', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.append(APP, SHARD, '7', '8', '9');
    const body = JSON.parse((await f.service.getBatchJson(APP, gatePass, 3)).toString('latin1')) as { ids: string[] };
    expect(body.ids.map((id) => BigInt(id))).toEqual([7n, 8n, 9n].map((i) => composeQueueId(i, SHARD, APP)));
  });

  it('skips malformed entries and fills the request from the entries after them', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.append(APP, SHARD, '7', 'x1', '', '-3', '8', '9', '10');
    // The first pop takes 3 (two malformed), the on-demand pop the next 2 (one malformed).
    expect(indexesOf(await f.service.get(APP, gatePass, 3), APP, SHARD)).toEqual([7n, 8n, 9n]);
    expect(f.lists.indexes(APP, SHARD)).toEqual([10n]);
    expect(f.repo.allocations).toHaveLength(0);
  });

  it('drops queued entries above max_limit_id and answers QUEUE_EXHAUSTED without refilling', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10, limitAt(20));
    f.lists.append(APP, SHARD, '19', '20', '21', '22');
    expect(indexesOf(await f.service.get(APP, gatePass, 2), APP, SHARD)).toEqual([19n, 20n]);
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueExhausted);
    expect(f.lists.entries(APP, SHARD)).toEqual(['22']);
    expect(f.repo.allocations).toHaveLength(0);
  });

  it('hands out every index up to max_limit_id once, then answers QUEUE_EXHAUSTED', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10, limitAt(25));
    const seen: bigint[] = [];
    for (let i = 0; i < 25; i++) {
      seen.push(...indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD));
    }
    expect(seen).toEqual(span(1, 25));
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueExhausted);
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(25n);
  });

  it('refuses a batch larger than what is left below the limit; its taken indexes are a gap, never handed out', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10, limitAt(25));
    expect(indexesOf(await f.service.get(APP, gatePass, 20), APP, SHARD)).toEqual(span(1, 20));
    expect(await errorKindOf(f.service.get(APP, gatePass, 10))).toBe(ErrorKind.QueueExhausted);
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueExhausted);
    expect(f.lists.entries(APP, SHARD)).toEqual([]);
    expect(f.repo.allocations.map((a) => `${a.from}..${a.to}`)).toEqual(['1..20', '21..25']);
  });

  it('answers QUEUE_EMPTY after RETRY_TIME on-demand attempts that brought nothing usable', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.append(APP, SHARD, 'a', 'b', 'c', 'd');
    // The request's pop and two on-demand attempts take one malformed entry each.
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueEmpty);
    expect(f.lists.entries(APP, SHARD)).toEqual(['d']);
    expect(f.repo.allocations).toHaveLength(0);
  });

  it('a request whose on-demand segments are refused by the marker is served from above it, or gets QUEUE_EMPTY, never an index below it', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    // The list went up to 35 before (a restored database): 1..10 refused, the row moved to 35.
    f.lists.setMarker(APP, SHARD, 35n);
    expect(indexesOf(await f.service.get(APP, gatePass, 2), APP, SHARD)).toEqual([36n, 37n]);

    const g = queueFixture();
    await g.addApp(APP, 10);
    g.lists.keepMarkerAhead();
    expect(await errorKindOf(g.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueEmpty);
    expect(g.lists.pushes.every((p) => p.refused)).toBe(true);
  });

  it('waits for another instance refilling the shard and takes what it pushed, without allocating', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    const release = f.locks.hold(f.keys.lock(APP, SHARD));
    const contended = f.locks.contended(f.keys.lock(APP, SHARD));
    const pending = f.service.get(APP, gatePass, 2);
    await contended;
    // The other instance's refill: its allocation, its push, then its lock released.
    const other = await f.repo.allocate(APP, SHARD, 1);
    await f.lists.pushSegment(APP, SHARD, other?.segment?.from ?? 0n, other?.segment?.to ?? 0n);
    release();
    expect(indexesOf(await pending, APP, SHARD)).toEqual([1n, 2n]);
    expect(f.repo.allocations).toHaveLength(1);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(3, 10));
  });

  it('goes ahead without the lock when another instance keeps it: its own segment, disjoint from the holder', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.locks.hold(f.keys.lock(APP, SHARD));
    expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([1n]);
    expect(f.locks.busy).toBe(1);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(2, 10));
    // The holder's own allocation comes after: never the same indexes.
    expect((await f.repo.allocate(APP, SHARD, 1))?.segment).toEqual({ from: 11n, to: 20n });
  });

  it('starts one background refill when a pop leaves the list at its threshold (refill ahead), none above it', async () => {
    const f = queueFixture({ QUEUE_REFILL_AHEAD: 'true', QUEUE_IDLE_RATIO: '0.2' });
    await f.addApp(APP, 10);
    await f.service.get(APP, gatePass, 1); // on demand: 1, then 2..10 queued
    expect(indexesOf(await f.service.get(APP, gatePass, 6), APP, SHARD)).toEqual(span(2, 7));
    await f.background.settled();
    expect(f.repo.allocations).toHaveLength(1); // 3 left: above 0.2 × 10
    expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([8n]); // 2 left: at the threshold
    await f.background.settled();
    expect(f.repo.allocations).toHaveLength(2);
    expect(f.lists.indexes(APP, SHARD)).toEqual(span(9, 20));
    expect(f.ahead.inFlight(APP, SHARD)).toBe(false);
  });

  it('reads a replaced list again after a reload: a budget earned on the old list never skips the new one\'s refill ahead', async () => {
    const f = queueFixture({ QUEUE_REFILL_AHEAD: 'true', QUEUE_IDLE_RATIO: '0.2' });
    await f.addApp(APP, 1000); // threshold 200
    f.lists.append(APP, SHARD, ...Array.from({ length: 20_000 }, (_, i) => String(i + 1)));
    await f.service.get(APP, gatePass, 1); // reads 19,999 left: ~300 plain pops allowed
    // Another instance deletes and re-creates the app; its list now holds 250 fresh indexes.
    await f.lists.deleteLists(APP, [SHARD]);
    f.lists.append(APP, SHARD, ...Array.from({ length: 250 }, (_, i) => String(50_001 + i)));
    await f.queueConfig.reload(); // the reload cron (or a local admin change) re-reads id_alloc
    const before = f.repo.allocations.length;
    for (let i = 0; i < 50; i++) {
      await f.service.get(APP, gatePass, 1);
    }
    await f.background.settled();
    // The 50th pop left 200 (the threshold): one refill ahead, before the list ran dry.
    expect(f.repo.allocations.length).toBe(before + 1);
    expect(f.lists.entries(APP, SHARD).length).toBeGreaterThan(200);
  });

  it('reloads on a miss: an app created on another instance since the last reload is served', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    await f.repo.createApp({ appId: 2, appName: 'later', step: 10, maxLimitId: 0n, description: null }, 64);
    expect(await f.service.get(2, gatePass, 1)).toEqual([composeQueueId(1n, SHARD, 2)]);
    expect(await errorKindOf(f.service.get(3, gatePass, 1))).toBe(ErrorKind.QueueAppNotFound);
  });

  it('answers BACKEND_UNAVAILABLE when the lists fail', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.fail = new Error('connect ECONNREFUSED');
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.BackendUnavailable);
  });

  describe('with REDIS_WAIT_REPLICAS (confirmed pops)', () => {
    it('drops a pop the replicas did not confirm (QUEUE_NOT_REPLICATED) and never hands it out', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      f.lists.confirmsPops = true;
      f.lists.append(APP, SHARD, '1', '2');
      f.lists.unconfirmed = true;
      expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueNotReplicated);
      f.lists.unconfirmed = false;
      expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([2n]);
    });

    it('confirms the pops of an on-demand refill; a reconnect during it drops its indexes', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      f.lists.confirmsPops = true;
      expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([1n]);
      const other = gatePassFor(6);
      f.repo.holdAllocations();
      const pending = f.service.get(APP, other, 1);
      await flush();
      f.lists.reconnect();
      f.repo.releaseAllocations();
      expect(await errorKindOf(pending)).toBe(ErrorKind.QueueNotReplicated);
      // Index 1 of shard 6 was taken by that request and dropped: the next one gets 2.
      expect(indexesOf(await f.service.get(APP, other, 1), APP, 6)).toEqual([2n]);
    });
  });
});
