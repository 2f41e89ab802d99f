import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { composeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { AppRegistrySync } from '../../../src/queue-id/app-registry-sync.service';
import { LowListSweep } from '../../../src/queue-id/refill/low-list-sweep';
import { ShardRefill } from '../../../src/queue-id/refill/shard-refill';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { claimRange, pushClaimed } from '../../../src/queue-id/redis/segment-push';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/** A gatePass for each shard 0..63, found by search (the hash is tested elsewhere). */
function gatePassForShard(shard: number): string {
  for (let i = 0; ; i++) {
    if (shardOf(`u${i}`) === shard) {
      return `u${i}`;
    }
  }
}

describe('queue refill, cleanup and max_limit_id', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  let sweeper: LowListSweep;
  let refill: ShardRefill;
  let listKey: (appId: number, shard: number) => string;

  beforeAll(async () => {
    env = await createTestEnv('qrefill');
    app = await startApp(env.config());
    sweeper = app.get(LowListSweep);
    refill = app.get(ShardRefill);
    listKey = (appId, shard) => `${env.keyPrefix}idList_${appId}_${shard}`;
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('the cron sweep refills a list at 0.2·step and leaves one above it alone', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 10, appName: 'r', step: 100 } })).status).toBe(201);
    await sweeper.run();
    expect(await env.redis.llen(listKey(10, 0))).toBe(100);
    const gp = gatePassForShard(0);
    // 100 → 21 queued: above 0.2 * 100, no refill.
    await request(app, 'GET', `/api/id/10?gatePass=${gp}&count=79`, { token: null });
    expect(await env.redis.llen(listKey(10, 0))).toBe(21);
    await sweeper.run();
    expect(await env.redis.llen(listKey(10, 0))).toBe(21);
    // 21 → 20 queued: exactly 0.2 * step, refilled by one step.
    await request(app, 'GET', `/api/id/10?gatePass=${gp}`, { token: null });
    expect(await env.redis.llen(listKey(10, 0))).toBe(20);
    const sweep = await sweeper.run();
    expect(sweep.refilled).toBe(1);
    expect(await env.redis.llen(listKey(10, 0))).toBe(120);
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 10 AND shard_id = 0')) as Array<{ max_id: string }>;
    expect(rows[0].max_id).toBe('200');
  });

  it('an empty list is refilled on demand: the request is served and the rest is queued', async () => {
    const gp = gatePassForShard(7);
    await env.redis.del(listKey(10, 7));
    const res = await request(app, 'GET', `/api/id/10?gatePass=${gp}`, { token: null });
    expect(res.status).toBe(200);
    // The 100 queued by the sweep were deleted (a gap); the next segment is 101..200.
    expect(res.body).toBe(composeQueueId(101n, 7, 10).toString());
    expect(await env.redis.llen(listKey(10, 7))).toBe(99);
  });

  it('id_alloc behind the list (a database restored from an older backup): nothing below the marker is served, the row moves past it', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 16, appName: 'restored', step: 100 } })).status).toBe(201);
    const marker = (shard: number): string => `{${listKey(16, shard)}}:pushed`;
    // The lists of shards 2 and 3 already handed out indexes up to 50,000; the database says 0.
    await env.redis.set(marker(2), '50000');
    await env.redis.set(marker(3), '50000');
    const maxId = async (shard: number): Promise<string> =>
      ((await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 16 AND shard_id = ?', [shard])) as Array<{ max_id: string }>)[0].max_id;

    // A request on an empty list: its on-demand segment 1..100 is refused, the row moves to
    // 50,000, and the request is served from 50,001 (not from 1, which may have been served).
    const res = await request(app, 'GET', `/api/id/16?gatePass=${gatePassForShard(2)}&count=3`, { token: null });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ids: [50_001n, 50_002n, 50_003n].map((i) => composeQueueId(i, 2, 16).toString()) });
    expect(await maxId(2)).toBe('50100');
    expect(await env.redis.lrange(listKey(16, 2), 0, 0)).toEqual(['50004']);

    // A sweep's refill: its segment 1..100 is refused, the row moves past the marker, and the
    // refill's second allocation fills the list from 50,001.
    await env.redis.del(listKey(16, 3));
    expect(await refill.refill({ appId: 16, shardId: 3 }, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 })).toEqual({ status: 'refilled', pushed: 100 });
    expect(await env.redis.lrange(listKey(16, 3), 0, -1)).toEqual(Array.from({ length: 100 }, (_, i) => String(50_001 + i)));
    expect(await maxId(3)).toBe('50100');
    expect(await env.redis.get(marker(3))).toBe('50100');
  });

  it('a reload leaves alone the lists of an app whose rows were removed by hand (no tombstone)', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 11, appName: 'gone', step: 10 } })).status).toBe(201);
    await sweeper.run();
    expect(await env.redis.llen(listKey(11, 3))).toBe(10);
    // Removed behind the service's back: this database no longer knows the app, so its lists are
    // not known to be ours (only admin deletes leave the tombstone that allows a cleanup).
    await env.sql('DELETE FROM id_alloc WHERE app_id = 11');
    const { deletedLists } = await app.get(AppRegistrySync).reloadAndCleanUp();
    expect(deletedLists).toBe(0);
    expect(await env.redis.llen(listKey(11, 3))).toBe(10);
    expectError(await request(app, 'GET', '/api/id/11?gatePass=a', { token: null }), 404, -2);
  });

  it('never returns an ID above max_limit_id and answers exhaustion with 410 / -5', async () => {
    // Shard 0 of app 12: indexes up to 5 fit, (5 << 14 | 12) = 81932 <= 82000 < (6 << 14 | 12).
    const limit = 82_000n;
    expect(
      (await request(app, 'POST', '/admin/apps', { body: { appId: 12, appName: 'lim', step: 2, maxLimitId: limit.toString() } }))
        .status,
    ).toBe(201);
    const gp = gatePassForShard(0);
    const ids: bigint[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(app, 'GET', `/api/id/12?gatePass=${gp}`, { token: null });
      expect(res.status).toBe(200);
      ids.push(BigInt(res.body));
    }
    expect(ids).toEqual([1n, 2n, 3n, 4n, 5n].map((i) => composeQueueId(i, 0, 12)));
    expect(ids.every((id) => id <= limit)).toBe(true);
    const body = expectError(await request(app, 'GET', `/api/id/12?gatePass=${gp}`, { token: null }), 410, -5);
    expect(body.message).toContain('max_limit_id');
    // Refills never allocate past the limit: max_id stopped at 5.
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 12 AND shard_id = 0')) as Array<{ max_id: string }>;
    expect(rows[0].max_id).toBe('5');
    const detail = (await request(app, 'GET', '/admin/apps/12')).json<{
      exhaustedShards: number;
      shards: Array<{ remainingCapacity: string }>;
    }>();
    expect(detail.shards[0].remainingCapacity).toBe('0');
    expect(detail.exhaustedShards).toBeGreaterThanOrEqual(1);
  });

  it('a batch near the limit gets the exhaustion error, and no ID above the limit ever leaks', async () => {
    const gp = gatePassForShard(1);
    const res = await request(app, 'GET', `/api/id/12?gatePass=${gp}&count=10`, { token: null });
    expectError(res, 410, -5);
    const single = await request(app, 'GET', `/api/id/12?gatePass=${gatePassForShard(2)}&count=2`, { token: null });
    expect(single.status).toBe(200);
    for (const id of single.json<{ ids: string[] }>().ids) {
      expect(BigInt(id)).toBeLessThanOrEqual(82_000n);
    }
  });

  it('a segment claimed before max_limit_id was lowered and pushed after it: taken off again, so no instance, even one not reloaded, hands out anything above the limit', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 14, appName: 'lowclaim', step: 100 } })).status).toBe(201);
    // A second instance whose registry still has no limit (its reload is off).
    const stale = await startApp(env.config());
    try {
      const gp = gatePassForShard(0);
      expect((await request(app, 'GET', `/api/id/14?gatePass=${gp}&count=10`, { token: null })).status).toBe(200);
      // A refill in flight: 101..200 allocated and claimed; its push comes after the PATCH.
      expect((await app.get(IdAllocRepository).allocate(14, 0, 1))?.segment).toEqual({ from: 101n, to: 200n });
      const marker = `{${listKey(14, 0)}}:pushed`;
      const limitKey = `{${listKey(14, 0)}}:limit`;
      expect(await claimRange(env.redis, listKey(14, 0), marker, 101n, 200n, limitKey)).toEqual({ claimed: true });
      const limit = composeQueueId(150n, 63, 14);
      expect((await request(app, 'PATCH', '/admin/apps/14', { body: { maxLimitId: limit.toString() } })).status).toBe(200);
      // The late push is taken off in the same transaction: the list never holds it.
      expect(await pushClaimed(env.redis, listKey(14, 0), 101n, 200n, limitKey)).toBe(0);
      expect(await env.redis.llen(listKey(14, 0))).toBe(0);
      // A claim of a segment allocated before the PATCH is refused outright.
      expect(await claimRange(env.redis, listKey(14, 0), marker, 201n, 300n, limitKey)).toEqual({ claimed: false, limit: 150n });
      for (const instance of [stale, app]) {
        const res = await request(instance, 'GET', `/api/id/14?gatePass=${gp}`, { token: null });
        // 11..200 are gaps; the row (max_id 200) is past the limit: exhausted, never an ID above it.
        expectError(res, 410, -5);
      }
    } finally {
      await stale.close();
    }
  });

  it('a limit left stored below id_alloc\'s (a raise whose Redis step failed): repeating the PATCH fixes it, and so does the reload', async () => {
    const limit = composeQueueId(500n, 63, 15);
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 15, appName: 'stale', step: 50, maxLimitId: limit.toString() } })).status).toBe(201);
    const gp = gatePassForShard(0);
    expect((await request(app, 'GET', `/api/id/15?gatePass=${gp}&count=50`, { token: null })).status).toBe(200);
    const limitKey = `{${listKey(15, 0)}}:limit`;
    // What a lowering to index 40 and a raise back whose Redis step failed leave behind.
    await env.redis.set(limitKey, '40', 'PX', 600_000);
    const maxId = async (): Promise<string> =>
      ((await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 15 AND shard_id = 0')) as Array<{ max_id: string }>)[0].max_id;
    expectError(await request(app, 'GET', `/api/id/15?gatePass=${gp}`, { token: null }), 503, -4);
    // One allocation for that request, not one per attempt (each a gap).
    expect(await maxId()).toBe('100');
    // The operator repeats the PATCH that raised the limit (id_alloc has it already).
    expect((await request(app, 'PATCH', '/admin/apps/15', { body: { maxLimitId: limit.toString() } })).status).toBe(200);
    expect(await env.redis.get(limitKey)).toBe('500');
    expect((await request(app, 'GET', `/api/id/15?gatePass=${gp}`, { token: null })).status).toBe(200);
    // Left stored again, 20 s ago: the reload's cleanup deletes it.
    await env.redis.set(limitKey, '40', 'PX', 580_000);
    expect(await app.get(AppRegistrySync).reloadAndCleanUp()).toMatchObject({ droppedLimits: 1 });
    expect(await env.redis.exists(limitKey)).toBe(0);
  });

  it('lowering max_limit_id drops queued indexes above it', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 13, appName: 'low', step: 1000 } })).status).toBe(201);
    const gp = gatePassForShard(0);
    expect((await request(app, 'GET', `/api/id/13?gatePass=${gp}`, { token: null })).status).toBe(200);
    expect(await env.redis.llen(listKey(13, 0))).toBe(999);
    // Only indexes <= 3 fit now. max_id is already 1000, so no refill may happen, and the 999
    // queued indexes (all above 3 but for 2 and 3) are dropped: the shard is exhausted at once.
    const limit = composeQueueId(3n, 63, 13);
    const patched = await request(app, 'PATCH', '/admin/apps/13', { body: { maxLimitId: limit.toString() } });
    expect(patched.status).toBe(200);
    const got: bigint[] = [];
    for (;;) {
      const res = await request(app, 'GET', `/api/id/13?gatePass=${gp}`, { token: null });
      if (res.status !== 200) {
        expectError(res, 410, -5);
        break;
      }
      got.push(BigInt(res.body));
    }
    expect(got).toEqual([]);
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 13 AND shard_id = 0')) as Array<{ max_id: string }>;
    expect(rows[0].max_id).toBe('1000');
  });
});
