import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { LeaseMonitor } from '../../../src/lease/lease-monitor';
import { MAX_INDEX, composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { QueueLeaseService } from '../../../src/queue-id/queue-lease.service';
import { errorKindOf, gatePassFor, indexesOf, queueFixture, span } from './queue-fixture';

const APP = 1;
const SHARD = 5;
const gatePass = gatePassFor(SHARD);

describe('the push marker on every path that allocates, and the over-fill under a busy lock', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('a marker above every index: 100 requests move the row by nothing, each answers QUEUE_MARKER_INVALID; deleted, the shard serves', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([1n]);
    f.lists.setRawMarker(APP, SHARD, (MAX_INDEX + 1n).toString());
    const kinds = new Set<string>();
    let served = 0;
    for (let i = 0; i < 100; i++) {
      try {
        served += (await f.service.get(APP, gatePass, 3)).length;
      } catch (err) {
        kinds.add(err instanceof IdGenError ? err.kind : String(err));
      }
    }
    // The 9 queued before the marker went bad are served (3 requests), the rest refused.
    expect(served).toBe(9);
    expect([...kinds]).toEqual([ErrorKind.QueueMarkerInvalid]);
    expect(f.repo.row(APP, SHARD)?.maxId).toBe(10n);
    f.lists.setRawMarker(APP, SHARD, null);
    expect(indexesOf(await f.service.get(APP, gatePass, 2), APP, SHARD)).toEqual([11n, 12n]);
  });

  it('requests at a lock held elsewhere refill without it one at a time per shard, of what they lack: the over-fill stays about a step', async () => {
    const f = queueFixture({ QUEUE_REFILL_MAX_SIZE: '100000', QUEUE_DEMAND_LOCK_WAIT_MS: '0' });
    await f.addApp(APP, 10);
    // The shard has grown: under the lock a refill would take 10,000 at once.
    for (let i = 0; i < 12; i++) {
      f.ahead.recordRefill(APP, SHARD, 10 * 2 ** i);
    }
    expect(f.ahead.sizeFor(APP, SHARD, 10)).toBeGreaterThan(10_000);
    f.locks.hold(f.keys.lock(APP, SHARD));
    f.repo.holdAllocations();
    const requests = Array.from({ length: 50 }, () => f.service.get(APP, gatePass, 2));
    await new Promise((resolve) => setImmediate(resolve));
    f.repo.releaseAllocations();
    const ids = (await Promise.all(requests)).flat();
    expect(new Set(ids).size).toBe(100);
    // 50 requests of 2 each: one unlocked refill of one step (10) at a time, not 50 grown ones.
    const allocated = f.repo.allocations.reduce((sum, a) => sum + Number(a.to - a.from + 1n), 0);
    expect(allocated).toBeLessThanOrEqual(110);
    expect(await f.lists.length(APP, SHARD)).toBeLessThan(10);
  });

  it('a stored limit left below id_alloc\'s (a raise whose Redis step failed): one allocation per request, not four; the reload deletes it', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10);
    f.lists.setStoredLimit(APP, SHARD, 5n);
    expect(await errorKindOf(f.service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueEmpty);
    expect(f.repo.allocations).toHaveLength(1);
    expect(await f.shardRefill.refill({ appId: APP, shardId: SHARD }, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 })).toEqual({ status: 'refused', pushed: 0 });
    expect(f.repo.allocations).toHaveLength(2);
    expect(await f.queueConfig.reloadAndCleanUp()).toEqual({ deletedLists: 0, droppedLimits: 1 });
    expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([21n]);
  });

  it('the reload leaves a stored limit that id_alloc has, and one stored again after it was read', async () => {
    const f = queueFixture();
    await f.addApp(APP, 10, composeQueueId(50n, 63, APP));
    f.lists.setStoredLimit(APP, SHARD, 50n);
    f.lists.setStoredLimit(APP, 6, 40n);
    // A PATCH stores the shard's limit again between the cleanup's read and its delete.
    const storedLimits = f.lists.storedLimits.bind(f.lists);
    f.lists.storedLimits = async (shards) => {
      const read = await storedLimits(shards);
      f.lists.setStoredLimit(APP, 6, 40n);
      return read;
    };
    expect(await f.queueConfig.reloadAndCleanUp()).toEqual({ deletedLists: 0, droppedLimits: 0 });
    expect([f.lists.storedLimit(APP, SHARD), f.lists.storedLimit(APP, 6)]).toEqual([50n, 40n]);
  });

  describe('leases', () => {
    function leases(f: ReturnType<typeof queueFixture>): QueueLeaseService {
      return new QueueLeaseService(f.repo as unknown as IdAllocRepository, new LeaseMonitor(), f.lists, f.keys, f.monitor);
    }

    it('after id_alloc was set back (a restored database) a lease never returns an index the list handed out', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      const served: bigint[] = [];
      for (let i = 0; i < 3; i++) {
        served.push(...indexesOf(await f.service.get(APP, gatePass, 10), APP, SHARD));
      }
      expect(served).toEqual(span(1, 30));
      // The restore: max_id back to 0; the list's marker still says 30.
      f.repo.setMaxId(APP, SHARD, 0n);
      const refusals: string[] = [];
      f.monitor.subscribeRefusals((r) => refusals.push(r));
      const lease = await leases(f).lease(APP, gatePass, 5);
      expect(lease).toMatchObject({ from: 31n, to: 40n });
      // 1..10 allocated first: a gap, the row moved past the marker.
      expect(refusals).toEqual(['row_behind']);
    });

    it('a marker that is not an index refuses the lease before anything is allocated', async () => {
      const f = queueFixture();
      await f.addApp(APP, 100);
      f.lists.setRawMarker(APP, SHARD, 'not-ours');
      expect(await errorKindOf(leases(f).lease(APP, gatePass, 50))).toBe(ErrorKind.QueueMarkerInvalid);
      expect(f.repo.allocations).toHaveLength(0);
    });

    it('a refill of a newer segment between the lease\'s allocation and its marker check does not refuse the lease', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      // Right after the lease's allocation, another request refills the list with the next segment.
      const allocate = f.repo.allocate.bind(f.repo);
      let refilling = false;
      f.repo.allocate = async (appId, shardId, minWanted) => {
        const result = await allocate(appId, shardId, minWanted);
        if (!refilling) {
          refilling = true;
          expect(indexesOf(await f.service.get(APP, gatePass, 1), APP, SHARD)).toEqual([51n]);
        }
        return result;
      };
      const refusals: string[] = [];
      f.monitor.subscribeRefusals((r) => refusals.push(r));
      expect(await leases(f).lease(APP, gatePass, 50)).toMatchObject({ from: 1n, to: 50n });
      expect(refusals).toEqual([]);
      expect(f.repo.allocations.map((a) => [a.from, a.to])).toEqual([
        [1n, 50n],
        [51n, 60n],
      ]);
    });

    it('a lease raises the marker over its range: after id_alloc is set back, neither a get nor a lease hands it out again', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      expect(await leases(f).lease(APP, gatePass, 50)).toMatchObject({ from: 1n, to: 50n });
      f.repo.setMaxId(APP, SHARD, 0n);
      const served = indexesOf(await f.service.get(APP, gatePass, 5), APP, SHARD);
      expect(served.every((i) => i > 50n)).toBe(true);
      f.repo.setMaxId(APP, SHARD, 0n);
      const again = await leases(f).lease(APP, gatePass, 20);
      expect(again.from).toBeGreaterThan(50n);
    });

    it('a lease whose marker cannot be raised (Redis failed) is refused: its range is a gap, never handed out', async () => {
      const f = queueFixture();
      await f.addApp(APP, 10);
      f.lists.raiseMarker = async () => {
        throw new Error('Redis at 127.0.0.1:6379 did not answer within 500 ms: the command may or may not have run');
      };
      await expect(leases(f).lease(APP, gatePass, 50)).rejects.toThrow(/did not answer/);
      expect(f.repo.allocations.map((a) => [a.from, a.to])).toEqual([[1n, 50n]]);
    });

    it('with no marker (nothing went through the list) a lease is granted as before', async () => {
      const f = queueFixture();
      await f.addApp(APP, 100);
      expect(await leases(f).lease(APP, gatePass, 50)).toMatchObject({ from: 1n, to: 100n });
    });
  });
});
