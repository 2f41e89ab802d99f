import { Logger } from '@nestjs/common';
import { AdminAppsService } from '../../../src/queue-id/admin/admin-apps.service';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { MAX_INDEX, composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { NewApp } from '../../../src/queue-id/id-alloc.repository';
import { errorKindOf, gatePassFor, indexesOf, queueFixture, span } from './queue-fixture';

const APP = 7;
const SHARD = 5;
const gatePass = gatePassFor(SHARD);

function setUp() {
  const f = queueFixture();
  const admin = new AdminAppsService(f.repo, f.lists, f.queueConfig, f.shardRefill, f.ahead);
  const app = (patch: Partial<NewApp> = {}): NewApp => ({
    appId: APP,
    appName: 'orders',
    step: 10,
    maxLimitId: 0n,
    description: null,
    ...patch,
  });
  const take = async (count = 1): Promise<bigint[]> => indexesOf(await f.service.get(APP, gatePass, count), APP, SHARD);
  return { ...f, admin, app, take };
}

describe('AdminAppsService (in-memory lists and id_alloc)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('creates the 64 shards once; the same settings again change nothing, other settings are a conflict', async () => {
    const { admin, app, take } = setUp();
    const first = await admin.create(app());
    expect(first.created).toBe(true);
    expect(first.app).toMatchObject({ appId: APP, shardCount: 64, queueLength: 0, resumedShards: 0, exhaustedShards: 0 });
    expect(first.app.remainingCapacity).toBe((MAX_INDEX * 64n).toString());
    expect(await take()).toEqual([1n]); // served at once: the registry was reloaded
    expect((await admin.create(app())).created).toBe(false);
    const conflict = await admin.create(app({ step: 20 })).catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(IdGenError);
    expect((conflict as IdGenError).kind).toBe(ErrorKind.Conflict);
  });

  it('shows each shard: queued, unallocated below the limit and remaining capacity', async () => {
    const { admin, app, take } = setUp();
    await admin.create(app({ maxLimitId: composeQueueId(25n, SHARD, APP) }));
    await take(); // 1..10 allocated on the shard, 2..10 queued
    const shard = (await admin.get(APP)).shards[SHARD];
    expect(shard).toMatchObject({ maxId: '10', queueLength: 9, unallocated: '15', remainingCapacity: '24' });
  });

  it('deletes an app: rows gone, lists retired at the tombstone; a resent delete is a 404 that repeats the Redis step', async () => {
    const { admin, app, take, lists, service } = setUp();
    await admin.create(app());
    await take();
    expect(await admin.remove(APP)).toEqual({ appId: APP, deletedRows: 64, deletedLists: 1, retiredMaxId: '10' });
    expect(lists.entries(APP, SHARD)).toEqual([]);
    expect(lists.marker(APP, SHARD)).toBe(10n);
    expect(await errorKindOf(service.get(APP, gatePass, 1))).toBe(ErrorKind.QueueAppNotFound);
    const again = await admin.remove(APP).catch((err: unknown) => err as IdGenError);
    expect(again).toMatchObject({ kind: ErrorKind.NotFound });
    expect((again as IdGenError).message).toContain('was deleted');
  });

  it('re-creates a deleted app above its tombstone: no index it ever allocated comes back', async () => {
    const { admin, app, take, repo } = setUp();
    await admin.create(app());
    expect(await take(3)).toEqual([1n, 2n, 3n]);
    await admin.remove(APP);
    const again = await admin.create(app());
    expect(again.created).toBe(true);
    expect(again.app.resumedShards).toBe(1);
    expect(repo.row(APP, SHARD)?.maxId).toBe(10n);
    expect(await take(2)).toEqual([11n, 12n]);
  });

  it('a re-create finishes a delete whose Redis step failed after its commit', async () => {
    const { admin, app, take, lists } = setUp();
    await admin.create(app());
    await take();
    lists.fail = new Error('connect ECONNREFUSED');
    await expect(admin.remove(APP)).rejects.toThrow('ECONNREFUSED');
    lists.fail = null;
    expect(lists.indexes(APP, SHARD)).toEqual(span(2, 10)); // the old app's queue is still there
    await admin.create(app());
    expect(lists.entries(APP, SHARD)).toEqual([]);
    expect(lists.marker(APP, SHARD)).toBe(10n);
    expect(await take()).toEqual([11n]);
  });

  it('the scheduled cleanup retires the lists of deleted apps only, never a list it does not know', async () => {
    const { admin, app, take, lists, queueConfig } = setUp();
    await admin.create(app());
    await take();
    lists.fail = new Error('connect ECONNREFUSED');
    await expect(admin.remove(APP)).rejects.toThrow();
    lists.fail = null;
    lists.append(99, 0, '1'); // another deployment's list under the same prefix
    expect(await queueConfig.reloadAndCleanUp()).toMatchObject({ deletedLists: 1 });
    expect(lists.entries(APP, SHARD)).toEqual([]);
    expect(lists.entries(99, 0)).toEqual(['1']);
  });

  it('a lowered max_limit_id deletes the lists that may hold indexes above it; a raised one keeps them', async () => {
    const { admin, app, take, lists } = setUp();
    await admin.create(app());
    await take();
    // No limit → a limit counts as lowering it. Nothing above it went through the list (marker 10).
    await admin.update(APP, { maxLimitId: composeQueueId(100n, SHARD, APP) });
    expect(lists.indexes(APP, SHARD)).toEqual(span(2, 10));
    expect(lists.storedLimit(APP, SHARD)).toBe(100n);
    await admin.update(APP, { maxLimitId: composeQueueId(200n, SHARD, APP) });
    expect(lists.storedLimit(APP, SHARD)).toBeUndefined();
    expect(lists.indexes(APP, SHARD)).toEqual(span(2, 10));
    // Below what the list may hold: the list goes (a gap).
    await admin.update(APP, { maxLimitId: composeQueueId(5n, SHARD, APP) });
    expect(lists.entries(APP, SHARD)).toEqual([]);
    await admin.update(APP, { appName: 'renamed' });
    expect((await admin.get(APP)).appName).toBe('renamed');
  });

  it('a max_limit_id PATCH repeated after its Redis step failed applies it; a repeated raise changes nothing', async () => {
    const { admin, app, take, lists } = setUp();
    await admin.create(app());
    expect(await take()).toEqual([1n]);
    lists.fail = new Error('Redis at 127.0.0.1:6379 did not answer within 500 ms: the command may or may not have run');
    await expect(admin.update(APP, { maxLimitId: composeQueueId(5n, SHARD, APP) })).rejects.toThrow(/did not answer/);
    lists.fail = null;
    // id_alloc has the new limit, Redis does not: the list still holds 2..10, above it from 6.
    expect(lists.storedLimit(APP, SHARD)).toBeUndefined();
    await admin.update(APP, { maxLimitId: composeQueueId(5n, SHARD, APP) });
    expect(lists.storedLimit(APP, SHARD)).toBe(5n);
    expect(lists.entries(APP, SHARD)).toEqual([]);
    // Set again (the same limit stored): nothing more is deleted.
    lists.append(APP, SHARD, '4');
    await admin.update(APP, { maxLimitId: composeQueueId(5n, SHARD, APP) });
    expect(lists.entries(APP, SHARD)).toEqual(['4']);
    // A raise whose Redis step failed leaves the lower limit stored; repeated, it goes.
    lists.fail = new Error('connect ECONNREFUSED');
    await expect(admin.update(APP, { maxLimitId: composeQueueId(1000n, SHARD, APP) })).rejects.toThrow(/ECONNREFUSED/);
    lists.fail = null;
    expect(lists.storedLimit(APP, SHARD)).toBe(5n);
    await admin.update(APP, { maxLimitId: composeQueueId(1000n, SHARD, APP) });
    expect(lists.storedLimit(APP, SHARD)).toBe(1000n);
    expect(lists.entries(APP, SHARD)).toEqual(['4']);
  });

  it('refills every shard with one more segment, whatever its length', async () => {
    const { admin, app, lists } = setUp();
    await admin.create(app());
    lists.append(APP, 0, 'x');
    expect(await admin.refillApp(APP)).toEqual({ appId: APP, refilled: 64, sufficient: 0, busy: 0, exhausted: 0, missing: 0, refused: 0 });
    expect(lists.entries(APP, 0)).toHaveLength(11);
    expect(lists.indexes(APP, SHARD)).toEqual(span(1, 10));
    expect(await errorKindOf(admin.refillApp(8))).toBe(ErrorKind.NotFound);
  });
});
