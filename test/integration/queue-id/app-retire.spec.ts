import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { AppRegistrySync } from '../../../src/queue-id/app-registry-sync.service';
import { claimRange, pushClaimed, pushRange } from '../../../src/queue-id/redis/segment-push';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/** A gatePass for the given shard, found by search (the hash is tested elsewhere). */
function gatePassForShard(shard: number): string {
  for (let i = 0; ; i++) {
    if (shardOf(`u${i}`) === shard) {
      return `u${i}`;
    }
  }
}

/**
 * "Never twice", item 3 (queue apps) and item 6: an admin delete leaves a tombstone per shard
 * (id_alloc_retired) so a re-created app resumes above everything it ever allocated, and the
 * reload's list cleanup only touches lists of apps this database deleted.
 */
describe('deleting and re-creating queue apps, and the cleanup of their lists', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  const list = (appId: number, shard: number): string => `${env.keyPrefix}idList_${appId}_${shard}`;
  const mark = (appId: number, shard: number): string => `{${env.keyPrefix}idList_${appId}_${shard}}:pushed`;

  async function ids(appId: number, gatePass: string, count: number): Promise<bigint[]> {
    const res = await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}&count=${count}`, { token: null });
    expect(res.status).toBe(200);
    return res.json<{ ids: string[] }>().ids.map((id) => BigInt(id));
  }

  async function maxIds(table: 'id_alloc' | 'id_alloc_retired', appId: number): Promise<string[]> {
    const rows = (await env.sql(`SELECT max_id FROM ${table} WHERE app_id = ? ORDER BY shard_id`, [appId])) as Array<{
      max_id: string;
    }>;
    return rows.map((r) => String(r.max_id));
  }

  async function listKeysOf(appId: number): Promise<string[]> {
    return (await env.redis.keys(`${env.keyPrefix}idList_${appId}_*`)).sort();
  }

  beforeAll(async () => {
    env = await createTestEnv('qretire');
    app = await startApp(env.config());
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  describe('item 3: a re-created app never reissues an ID', () => {
    it('DELETE then POST of the same appId resumes above every index the deleted app issued', async () => {
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 7, appName: 'seven', step: 5 } })).status).toBe(201);
      const before = await ids(7, 'alice', 5);
      expect(before.map((id) => decomposeQueueId(id).index)).toEqual([1n, 2n, 3n, 4n, 5n]);

      const deleted = await request(app, 'DELETE', '/admin/apps/7');
      expect(deleted.status).toBe(200);
      const created = await request(app, 'POST', '/admin/apps', { body: { appId: 7, appName: 'seven', step: 5 } });
      expect(created.status).toBe(201);
      const after = await ids(7, 'alice', 5);
      expect(after.filter((id) => before.includes(id))).toEqual([]);
      expect(after.map((id) => decomposeQueueId(id).index)).toEqual([6n, 7n, 8n, 9n, 10n]);

      expect(deleted.json()).toMatchObject({ appId: 7, deletedRows: 64, retiredMaxId: '5' });
      // Only shard 0 (alice's) had allocated anything.
      expect(created.json()).toMatchObject({ resumedShards: 1 });
    });

    it('a resent DELETE and a resent POST are harmless, and a tombstone is never lowered', async () => {
      // App 7 now stands at max_id 10 on shard 0.
      expect((await request(app, 'DELETE', '/admin/apps/7')).status).toBe(200);
      expect((await maxIds('id_alloc_retired', 7))[0]).toBe('10');
      const again = expectError(await request(app, 'DELETE', '/admin/apps/7'), 404, -106);
      expect(again.message).toContain('was deleted');
      expect((await maxIds('id_alloc_retired', 7))[0]).toBe('10');

      const first = await request(app, 'POST', '/admin/apps', { body: { appId: 7, appName: 'seven', step: 5 } });
      const second = await request(app, 'POST', '/admin/apps', { body: { appId: 7, appName: 'seven', step: 5 } });
      expect([first.status, second.status]).toEqual([201, 200]);
      expect((await maxIds('id_alloc', 7))[0]).toBe('10');

      // A tombstone higher than the live row (as after an older, larger life of the app) stays.
      await env.sql('UPDATE id_alloc_retired SET max_id = 500 WHERE app_id = 7 AND shard_id = 0');
      expect((await request(app, 'DELETE', '/admin/apps/7')).status).toBe(200);
      expect((await maxIds('id_alloc_retired', 7))[0]).toBe('500');
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 7, appName: 'seven', step: 5 } })).status).toBe(201);
      expect((await ids(7, 'alice', 1)).map((id) => decomposeQueueId(id).index)).toEqual([501n]);
    });

    it('a refill that allocated before the delete cannot make the re-created app reissue its range', async () => {
      const shard = 3;
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 8, appName: 'eight', step: 100 } })).status).toBe(201);
      const repo = app.get(IdAllocRepository);
      // A refill in flight: its allocation is committed, its push has not happened yet.
      const inFlight = await repo.allocate(8, shard, 1);
      expect(inFlight?.segment).toEqual({ from: 1n, to: 100n });

      expect((await request(app, 'DELETE', '/admin/apps/8')).status).toBe(200);
      // A refill whose allocation comes after the delete finds no row.
      expect(await repo.allocate(8, shard, 1)).toBeNull();
      // The in-flight refill now pushes its range: refused by the marker the delete raised.
      const late = await pushRange(env.redis, list(8, shard), mark(8, shard), 1n, 100n);
      expect(late).toEqual({ pushed: 0, refusedAt: { from: 1n, mark: 100n } });
      expect(await env.redis.llen(list(8, shard))).toBe(0);

      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 8, appName: 'eight', step: 100 } })).status).toBe(201);
      const got = await ids(8, gatePassForShard(shard), 100);
      const indexes = got.map((id) => decomposeQueueId(id).index);
      expect(indexes.filter((i) => i <= 100n)).toEqual([]);
      expect(indexes[0]).toBe(101n);

      // Tombstone and "pushed up to" marker cover the in-flight range: the guarded push of
      // 1..100 (from <= marker) is refused. The marker is at 200: the on-demand refill that served
      // 101..200 straight to the request claimed them first.
      expect((await maxIds('id_alloc_retired', 8))[shard]).toBe('100');
      expect(await env.redis.get(mark(8, shard))).toBe('200');
      expect(await env.redis.get(mark(8, 0))).toBe('0');
      // Nothing of the old range reached the re-created app's list.
      const queued = await env.redis.lrange(list(8, shard), 0, -1);
      expect(queued.filter((i) => BigInt(i) <= 100n)).toEqual([]);
    });

    /**
     * The window of the two-step push (segment-push.ts): a refill claimed its segment before the
     * delete, and its RPUSH arrives after it. The list was deleted and the marker raised, but a
     * plain RPUSH is not checked: the old segment lands once in a list of the same name.
     */
    it('a segment claimed before the delete and pushed after a re-create is served once, never twice', async () => {
      const shard = 5;
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 14, appName: 'fourteen', step: 100 } })).status).toBe(201);
      const gatePass = gatePassForShard(shard);
      const served: bigint[] = await ids(14, gatePass, 30); // 1..30 served, 31..100 queued
      const inFlight = await app.get(IdAllocRepository).allocate(14, shard, 1);
      expect(inFlight?.segment).toEqual({ from: 101n, to: 200n });
      expect(await claimRange(env.redis, list(14, shard), mark(14, shard), 101n, 200n)).toEqual({ claimed: true });

      expect((await request(app, 'DELETE', '/admin/apps/14')).status).toBe(200);
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 14, appName: 'fourteen', step: 100 } })).status).toBe(201);
      // The claimed RPUSH arrives now, in the re-created app's list.
      expect(await pushClaimed(env.redis, list(14, shard), 101n, 200n)).toBe(100);

      for (let i = 0; i < 4; i++) {
        served.push(...(await ids(14, gatePass, 100)));
      }
      const indexes = served.map((id) => decomposeQueueId(id).index);
      expect(new Set(indexes.map(String)).size).toBe(indexes.length);
      // 31..100 were deleted with the old list (a gap); 101..200 were served once; the re-created
      // app's own segments start above the tombstone (200).
      expect(indexes.filter((i) => i > 30n && i <= 100n)).toEqual([]);
      expect(indexes.filter((i) => i > 100n && i <= 200n)).toHaveLength(100);
      expect((await maxIds('id_alloc_retired', 14))[shard]).toBe('200');
      const queued = (await env.redis.lrange(list(14, shard), 0, -1)).map(BigInt);
      expect(queued.filter((i) => indexes.includes(i))).toEqual([]);
      expect(new Set(queued.map(String)).size).toBe(queued.length);
    });

    it('a segment claimed before the delete and pushed after it, app not re-created: the reload deletes that list', async () => {
      const shard = 6;
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 15, appName: 'fifteen', step: 100 } })).status).toBe(201);
      expect((await app.get(IdAllocRepository).allocate(15, shard, 1))?.segment).toEqual({ from: 1n, to: 100n });
      expect(await claimRange(env.redis, list(15, shard), mark(15, shard), 1n, 100n)).toEqual({ claimed: true });
      expect((await request(app, 'DELETE', '/admin/apps/15')).status).toBe(200);
      expect(await pushClaimed(env.redis, list(15, shard), 1n, 100n)).toBe(100);
      expect(await env.redis.llen(list(15, shard))).toBe(100);
      // Nothing serves a deleted app; the scheduled reload deletes its lists again.
      expect((await request(app, 'GET', `/api/id/15?gatePass=${gatePassForShard(shard)}`, { token: null })).status).toBe(404);
      expect((await app.get(AppRegistrySync).reloadAndCleanUp()).deletedLists).toBeGreaterThanOrEqual(1);
      expect(await env.redis.exists(list(15, shard))).toBe(0);
      expect(await env.redis.get(mark(15, shard))).toBe('100');
    });

    it('concurrent creates of one new appId: one 201, the others 200, 64 rows', async () => {
      const results = await Promise.all(
        Array.from({ length: 4 }, () => request(app, 'POST', '/admin/apps', { body: { appId: 9, appName: 'nine' } })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
      expect(await maxIds('id_alloc', 9)).toHaveLength(64);
    });
  });

  describe('item 6: the list cleanup only deletes lists of apps this database deleted', () => {
    let other: TestEnv;
    let otherApp: NestFastifyApplication;

    beforeAll(async () => {
      // Another deployment: its own database, the same Redis database and key prefix.
      other = await createTestEnv('qretireother');
      otherApp = await startApp(other.config({ KEY_PREFIX: env.keyPrefix }));
    });

    afterAll(async () => {
      await otherApp?.close();
      await other?.cleanup();
    });

    it("another deployment's lists survive this deployment's start and its reloads", async () => {
      expect((await request(otherApp, 'POST', '/admin/apps', { body: { appId: 42, appName: 'theirs', step: 10 } })).status).toBe(
        201,
      );
      expect((await request(otherApp, 'POST', '/admin/apps/42/refill')).json()).toMatchObject({ refilled: 64 });
      expect(await listKeysOf(42)).toHaveLength(64);

      // A cold start of this deployment (reload and cleanup at start), then a scheduled reload.
      const restarted = await startApp(env.config());
      try {
        expect((await restarted.get(AppRegistrySync).reloadAndCleanUp()).deletedLists).toBe(0);
      } finally {
        await restarted.close();
      }
      expect(await app.get(AppRegistrySync).reloadAndCleanUp()).toMatchObject({ deletedLists: 0 });
      expect(await listKeysOf(42)).toHaveLength(64);
      expect(await env.redis.llen(list(42, 0))).toBe(10);
    });

    it('a delete whose Redis step never ran is finished by the next reload, and only for its app', async () => {
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 10, appName: 'ten', step: 10 } })).status).toBe(201);
      expect((await request(app, 'POST', '/admin/apps/10/refill')).json()).toMatchObject({ refilled: 64 });
      // The delete's DB transaction committed, then the instance died before the Redis step.
      await env.sql(
        'INSERT INTO id_alloc_retired (app_id, shard_id, max_id) SELECT app_id, shard_id, max_id FROM id_alloc WHERE app_id = 10',
      );
      await env.sql('DELETE FROM id_alloc WHERE app_id = 10');
      expect(await listKeysOf(10)).toHaveLength(64);

      const { deletedLists } = await app.get(AppRegistrySync).reloadAndCleanUp();
      expect(deletedLists).toBe(64);
      expect(await listKeysOf(10)).toEqual([]);
      expect(await env.redis.get(mark(10, 0))).toBe('10');
      expect(await env.redis.get(mark(10, 63))).toBe('10');
      // The other deployment's lists and this deployment's live apps are untouched.
      expect(await listKeysOf(42)).toHaveLength(64);
      expect(await env.redis.exists(list(8, 3))).toBe(1);
    });
  });

  describe('a delete whose Redis step failed after its commit', () => {
    it('is finished by a resent DELETE too (404, lists deleted, markers raised)', async () => {
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 12, appName: 'twelve', step: 20 } })).status).toBe(201);
      expect((await request(app, 'POST', '/admin/apps/12/refill')).json()).toMatchObject({ refilled: 64 });
      await env.sql(
        'INSERT INTO id_alloc_retired (app_id, shard_id, max_id) SELECT app_id, shard_id, max_id FROM id_alloc WHERE app_id = 12',
      );
      await env.sql('DELETE FROM id_alloc WHERE app_id = 12');
      const resent = expectError(await request(app, 'DELETE', '/admin/apps/12'), 404, -106);
      expect(resent.message).toContain('was deleted');
      expect(await listKeysOf(12)).toEqual([]);
      expect(await env.redis.get(mark(12, 5))).toBe('20');
    });
  });

  describe('without the id_alloc_retired table (DB_MIGRATIONS_RUN=false on an unmigrated database)', () => {
    beforeAll(async () => {
      await env.sql('DROP TABLE id_alloc_retired');
    });

    it('refuses to delete or create an app rather than forget what it issued, and cleans up nothing', async () => {
      const refused = expectError(await request(app, 'DELETE', '/admin/apps/9'), 500, -500);
      expect(refused.message).toContain('id_alloc_retired');
      expect(await maxIds('id_alloc', 9)).toHaveLength(64);
      const create = expectError(await request(app, 'POST', '/admin/apps', { body: { appId: 11, appName: 'eleven' } }), 500, -500);
      expect(create.message).toContain('run the migrations');
      expect(await app.get(AppRegistrySync).reloadAndCleanUp()).toMatchObject({ deletedLists: 0 });
      expect(await listKeysOf(42)).toHaveLength(64);
    });
  });
});
