import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { composeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { appSuite } from '../../support/app-suite';
import { expectError, request } from '../../support/test-env';

/** A gatePass on `shard`, found by search. */
function gatePassFor(shard: number): string {
  for (let i = 0; ; i++) {
    if (shardOf(`m${i}`) === shard) {
      return `m${i}`;
    }
  }
}

/**
 * The lists' push markers on the real Redis and MariaDB, on the paths that allocate from
 * id_alloc: a lease after the database was set back (a restore from an older backup) never
 * leases an ID the list served; a marker that is not an index (above every index, or not a
 * number) refuses the shard with 503 QUEUE_MARKER_INVALID naming its key, moves the row by at
 * most one refill however many requests come, and the shard serves again once it is removed,
 * without a restart. Before: the lease answered 1..1000 again (1,000 of 1,000 served already),
 * and the bad marker burned the shard to its limit (410 for good).
 */
describe('push markers on every path that allocates', () => {
  const suite = appSuite('qmarkers');
  let app: NestFastifyApplication;
  const markerKey = (appId: number, shard: number): string => `{${suite.env.keyPrefix}idList_${appId}_${shard}}:pushed`;
  const maxId = async (appId: number, shard: number): Promise<bigint> => {
    const rows = (await suite.env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shard])) as Array<{
      max_id: string;
    }>;
    return BigInt(rows[0].max_id);
  };

  beforeAll(async () => {
    app = await suite.start();
  });

  it('a lease after id_alloc was set back leases none of the IDs already served', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 8, appName: 'restored', step: 1000 } })).status).toBe(201);
    const served = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await request(app, 'GET', '/api/id/8?gatePass=alice&count=1000', { token: null });
      expect(res.status).toBe(200);
      res.json<{ ids: string[] }>().ids.forEach((id) => served.add(id));
    }
    expect(served.size).toBe(3000);
    // The restore: id_alloc back to where an older backup had it.
    await suite.env.sql('UPDATE id_alloc SET max_id = 0 WHERE app_id = 8');
    const res = await request(app, 'POST', '/api/id/8/lease?gatePass=alice&count=1000', { token: null });
    expect(res.status).toBe(200);
    const lease = res.json<{ shard: number; from: string; to: string }>();
    let again = 0;
    for (let i = BigInt(lease.from); i <= BigInt(lease.to); i++) {
      again += served.has(composeQueueId(i, lease.shard, 8).toString()) ? 1 : 0;
    }
    expect({ from: lease.from, again }).toEqual({ from: '3001', again: 0 });
    // The row was moved past the marker (the first allocation, 1..1000, is a gap).
    expect(await maxId(8, lease.shard)).toBe(4000n);
  });

  it('a lease raises the marker: after id_alloc is set back, a get and a lease hand out none of the IDs leased before', async () => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 12, appName: 'leased', step: 1000 } })).status).toBe(201);
    const leased = await request(app, 'POST', '/api/id/12/lease?gatePass=alice&count=1000', { token: null });
    expect(leased.status).toBe(200);
    const first = leased.json<{ shard: number; from: string; to: string }>();
    expect([first.from, first.to]).toEqual(['1', '1000']);
    expect(await suite.env.redis.get(markerKey(12, first.shard))).toBe('1000');
    // The restore: id_alloc back to 0. The list never held any of those IDs.
    await suite.env.sql('UPDATE id_alloc SET max_id = 0 WHERE app_id = 12');
    const got = await request(app, 'GET', '/api/id/12?gatePass=alice&count=10', { token: null });
    expect(got.status).toBe(200);
    const indexes = got.json<{ ids: string[] }>().ids.map((id) => BigInt(id) >> 14n);
    expect(indexes.filter((i) => i <= 1000n)).toEqual([]);
    await suite.env.sql('UPDATE id_alloc SET max_id = 0 WHERE app_id = 12');
    const again = await request(app, 'POST', '/api/id/12/lease?gatePass=alice&count=1000', { token: null });
    expect(again.status).toBe(200);
    expect(BigInt(again.json<{ from: string }>().from)).toBeGreaterThan(1000n);
  });

  it.each([
    ['above every index (2^49)', (1n << 49n).toString(), 9],
    ['not a number', 'garbage', 10],
  ])('a marker %s: 100 requests move the row by at most one refill, each 503 naming the key; removed, the shard serves', async (_n, raw, appId) => {
    const created = await request(app, 'POST', '/admin/apps', {
      body: { appId, appName: `marker-${appId}`, step: 1000, maxLimitId: '4294967295' },
    });
    expect(created.status).toBe(201);
    const shard = 0;
    const gatePass = gatePassFor(shard);
    await suite.env.redis.set(markerKey(appId, shard), raw);
    const before = await maxId(appId, shard);
    for (let i = 0; i < 100; i++) {
      const path = i % 2 === 0 ? `/api/id/${appId}?gatePass=${gatePass}` : `/api/id/${appId}?gatePass=${gatePass}&count=10`;
      const body = expectError(await request(app, 'GET', path, { token: null }), 503, -7);
      expect(body.message).toContain(markerKey(appId, shard));
    }
    // Leases and the admin refill are refused too, before id_alloc moves.
    expectError(await request(app, 'POST', `/api/id/${appId}/lease?gatePass=${gatePass}&count=10`, { token: null }), 503, -7);
    const refilled = await request(app, 'POST', `/admin/apps/${appId}/refill`);
    expect(refilled.status).toBe(200);
    expect(refilled.json()).toMatchObject({ refilled: 63, refused: 1 });
    expect((await maxId(appId, shard)) - before).toBeLessThanOrEqual(1000n);
    // An operator removes the key: the same app serves again, no restart.
    await suite.env.redis.del(markerKey(appId, shard));
    const res = await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}&count=10`, { token: null });
    expect(res.status).toBe(200);
  });
});
