import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { HistoryPruner } from '../../../src/id-history/history-pruner';
import { composeQueueId, decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { appSuite } from '../../support/app-suite';
import { expectError, request } from '../../support/test-env';

interface Decoded {
  id: string;
  appId: number;
  shard: number;
  index: string;
  allocatedAt: string | null;
}

/** The allocation history: the time of queue and segment IDs, and the first ID allocated at or after a time. */
describe('allocation history', () => {
  const suite = appSuite('idhistory');
  let app: NestFastifyApplication;
  const get = (url: string) => request(app, 'GET', url, { token: null });

  async function dbNow(): Promise<string> {
    const rows = (await suite.env.sql("SELECT DATE_FORMAT(UTC_TIMESTAMP(3), '%Y-%m-%dT%H:%i:%s.%fZ') AS t")) as Array<{ t: string }>;
    return rows[0].t.replace(/(\.\d{3})\d*Z$/, '$1Z');
  }

  function expectRecent(iso: string | null): void {
    expect(iso).not.toBeNull();
    expect(Math.abs(Date.parse(iso as string) - Date.now())).toBeLessThan(10_000);
  }

  beforeAll(async () => {
    app = await suite.start({ SNOWFLAKE_MODE: 'off' });
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'hist', step: 10 } })).status).toBe(201);
    expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'orders', step: 10 } })).status).toBe(201);
  });

  it('a queue ID issued now decodes to its app, shard, index and an allocatedAt within seconds of now', async () => {
    const id = (await get('/api/id/5?gatePass=alice')).body;
    const res = await get(`/api/id/decode/${id}`);
    expect(res.status).toBe(200);
    const decoded = res.json<Decoded>();
    const parts = decomposeQueueId(BigInt(id));
    expect(decoded).toMatchObject({ id, appId: 5, shard: shardOf('alice'), index: parts.index.toString() });
    expectRecent(decoded.allocatedAt);
  });

  it('a segment ID issued now decodes to an allocatedAt within seconds of now', async () => {
    const id = (await get('/api/segment/get/orders')).body;
    const res = await get(`/api/segment/decode/orders/${id}`);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ tag: 'orders', id });
    expectRecent(res.json<{ allocatedAt: string }>().allocatedAt);
  });

  it('leases record their ranges the same way', async () => {
    const queue = await request(app, 'POST', '/api/id/5/lease?gatePass=bob&count=25', { token: null });
    expect(queue.status).toBe(200);
    const lease = queue.json<{ shard: number; from: string; to: string }>();
    for (const index of [lease.from, lease.to]) {
      const id = composeQueueId(BigInt(index), lease.shard, 5);
      expectRecent((await get(`/api/id/decode/${id}`)).json<Decoded>().allocatedAt);
    }
    const rows = (await suite.env.sql('SELECT from_index, to_index FROM id_alloc_history WHERE app_id = 5 AND shard_id = ? AND from_index = ?', [
      lease.shard,
      lease.from,
    ])) as Array<{ from_index: string; to_index: string }>;
    expect(rows).toEqual([{ from_index: lease.from, to_index: lease.to }]);

    const segment = await request(app, 'POST', '/api/segment/lease/orders?count=40', { token: null });
    const range = segment.json<{ from: string; to: string }>();
    for (const id of [range.from, range.to]) {
      expectRecent((await get(`/api/segment/decode/orders/${id}`)).json<{ allocatedAt: string }>().allocatedAt);
    }
  });

  it('"ID at time" answers an ID allocated at or after the time asked (queue shard and segment tag)', async () => {
    // Use the first range up, then ask for the time between it and the next allocation.
    await get('/api/id/5?gatePass=carol&count=10');
    await get('/api/segment/get/orders?count=20');
    const time = await dbNow();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const after = (await get('/api/id/5?gatePass=carol&count=15')).json<{ ids: string[] }>().ids;
    const queueAt = await get(`/api/id/5/at?gatePass=carol&time=${time}`);
    expect(queueAt.status).toBe(200);
    const found = queueAt.json<{ id: string; allocatedAt: string; shard: number }>();
    expect(found.shard).toBe(shardOf('carol'));
    expect(Date.parse(found.allocatedAt)).toBeGreaterThanOrEqual(Date.parse(time));
    expect((await get(`/api/id/decode/${found.id}`)).json<Decoded>().allocatedAt).toBe(found.allocatedAt);
    // The first ID of the first range after the time: an ID of the shard was allocated at or after
    // the time exactly when it is at or above that ID.
    expect(after).toContain(found.id);
    for (const id of after) {
      const at = (await get(`/api/id/decode/${id}`)).json<Decoded>().allocatedAt as string;
      expect({ id, late: Date.parse(at) >= Date.parse(time) }).toEqual({ id, late: BigInt(id) >= BigInt(found.id) });
    }
    const byShard = await get(`/api/id/5/at?shard=${found.shard}&time=${Date.parse(time)}`);
    expect(byShard.json()).toEqual(found);

    const segmentIds = (await get('/api/segment/get/orders?count=30')).json<{ ids: string[] }>().ids;
    const segmentAt = await get(`/api/segment/at/orders?time=${time}`);
    expect(segmentAt.status).toBe(200);
    const seg = segmentAt.json<{ id: string; allocatedAt: string }>();
    expect(Date.parse(seg.allocatedAt)).toBeGreaterThanOrEqual(Date.parse(time));
    // (The dynamic step may keep the first range after the time beyond these 30 IDs.)
    for (const id of segmentIds) {
      const at = (await get(`/api/segment/decode/orders/${id}`)).json<{ allocatedAt: string }>().allocatedAt;
      expect({ id, late: Date.parse(at) >= Date.parse(time) }).toEqual({ id, late: BigInt(id) >= BigInt(seg.id) });
    }
    expect((await get(`/api/segment/decode/orders/${seg.id}`)).json<{ allocatedAt: string }>().allocatedAt).toBe(seg.allocatedAt);

    expectError(await get('/api/id/5/at?gatePass=carol&time=2999-01-01T00:00:00Z'), 404, -106);
    expectError(await get('/api/segment/at/orders?time=2999-01-01T00:00:00Z'), 404, -106);
  });

  it('IDs never allocated, and IDs older than the retention, decode to allocatedAt null', async () => {
    const never = composeQueueId(10n ** 9n, 3, 5);
    expect((await get(`/api/id/decode/${never}`)).json<Decoded>().allocatedAt).toBeNull();
    expect((await get('/api/segment/decode/orders/999999999')).json<{ allocatedAt: null }>().allocatedAt).toBeNull();
    expect((await get('/api/segment/decode/nosuchtag/1')).json<{ allocatedAt: null }>().allocatedAt).toBeNull();
    // A range allocated 100 days ago (default retention: 90 days) is pruned.
    await suite.env.sql(
      'INSERT INTO id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at) VALUES (9, 1, 1, 100, UTC_TIMESTAMP(3) - INTERVAL 100 DAY)',
    );
    await suite.env.sql(
      "INSERT INTO leaf_alloc_history (biz_tag, from_id, to_id, allocated_at) VALUES ('old', 1, 100, UTC_TIMESTAMP(3) - INTERVAL 100 DAY)",
    );
    const old = composeQueueId(50n, 1, 9);
    expect((await get(`/api/id/decode/${old}`)).json<Decoded>().allocatedAt).not.toBeNull();
    const deleted = await app.get(HistoryPruner).prune();
    expect(deleted).toEqual({ id_alloc_history: 1, leaf_alloc_history: 1 });
    expect((await get(`/api/id/decode/${old}`)).json<Decoded>().allocatedAt).toBeNull();
    expect((await get('/api/segment/decode/old/50')).json<{ allocatedAt: null }>().allocatedAt).toBeNull();
    // The recent history stays.
    const recent = (await suite.env.sql('SELECT COUNT(*) AS n FROM id_alloc_history')) as Array<{ n: number | string }>;
    expect(Number(recent[0].n)).toBeGreaterThan(0);
  });

  it('prunes a backlog in batches by primary key: every old row, none of the recent ones', async () => {
    // 2,500 old ranges (three batches) over a few shards and tags, and recent ones between them.
    const values = (n: number, daysAgo: number, base: number) =>
      Array.from({ length: n }, (_, i) => `(${20 + (i % 3)}, ${i % 7}, ${base + i}, ${base + i}, UTC_TIMESTAMP(3) - INTERVAL ${daysAgo} DAY)`).join(', ');
    await suite.env.sql(`INSERT INTO id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at) VALUES ${values(2500, 120, 1000)}`);
    await suite.env.sql(`INSERT INTO id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at) VALUES ${values(30, 1, 900_000)}`);
    const tags = Array.from({ length: 1200 }, (_, i) => `('bt${i % 5}', ${i + 1}, ${i + 1}, UTC_TIMESTAMP(3) - INTERVAL 95 DAY)`).join(', ');
    await suite.env.sql(`INSERT INTO leaf_alloc_history (biz_tag, from_id, to_id, allocated_at) VALUES ${tags}`);
    const count = async (table: string, where: string): Promise<number> =>
      Number(((await suite.env.sql(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`)) as Array<{ n: string }>)[0].n);
    const recentBefore = await count('id_alloc_history', 'allocated_at >= UTC_TIMESTAMP() - INTERVAL 90 DAY');
    expect(await app.get(HistoryPruner).prune()).toEqual({ id_alloc_history: 2500, leaf_alloc_history: 1200 });
    expect(await count('id_alloc_history', 'allocated_at < UTC_TIMESTAMP() - INTERVAL 90 DAY')).toBe(0);
    expect(await count('leaf_alloc_history', 'allocated_at < UTC_TIMESTAMP() - INTERVAL 90 DAY')).toBe(0);
    expect(await count('id_alloc_history', 'allocated_at >= UTC_TIMESTAMP() - INTERVAL 90 DAY')).toBe(recentBefore);
  });

  it('without the history tables (migrations not run): decodes to null, "at" finds nothing, segment IDs still issue', async () => {
    const id = (await get('/api/id/5?gatePass=dave')).body;
    await suite.env.sql('DROP TABLE id_alloc_history');
    await suite.env.sql('DROP TABLE leaf_alloc_history');
    expect((await get(`/api/id/decode/${id}`)).json<Decoded>().allocatedAt).toBeNull();
    expectError(await get(`/api/id/5/at?gatePass=dave&time=2020-01-01T00:00:00Z`), 404, -106);
    const fetched = await get('/api/segment/get/orders?count=200');
    expect(fetched.status).toBe(200);
    const lease = await request(app, 'POST', '/api/segment/lease/orders?count=10', { token: null });
    expect(lease.status).toBe(200);
    expect((await get(`/api/segment/decode/orders/${lease.json<{ from: string }>().from}`)).json<{ allocatedAt: null }>().allocatedAt).toBeNull();
    expectError(await get('/api/segment/at/orders?time=2020-01-01T00:00:00Z'), 404, -106);
  });

  it('bad input answers 400 {code, message}', async () => {
    for (const url of [
      '/api/id/decode/abc',
      '/api/id/decode/0',
      '/api/id/decode/9223372036854775808',
      '/api/id/decode/-1',
      '/api/id/5/at?gatePass=a',
      '/api/id/5/at?time=2026-01-01T00:00:00Z',
      '/api/id/5/at?gatePass=a&shard=1&time=2026-01-01T00:00:00Z',
      '/api/id/5/at?shard=64&time=2026-01-01T00:00:00Z',
      '/api/id/256/at?shard=1&time=2026-01-01T00:00:00Z',
      '/api/id/5/at?shard=1&time=2026-01-01T00:00:00',
      '/api/id/5/at?shard=1&time=yesterday',
      '/api/id/5/at?shard=1&time=99999999999999999',
      '/api/segment/decode/orders/x',
      `/api/segment/decode/${'t'.repeat(129)}/1`,
      '/api/segment/at/orders',
      '/api/segment/at/orders?time=2026-13-01T00:00:00Z',
    ]) {
      expectError(await get(url), 400, -100);
    }
  });
});
