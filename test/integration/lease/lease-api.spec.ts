import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { MAX_LEASE_COUNT } from '../../../src/lease/lease-input';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';
import { SEGMENT_TEST_ENV } from '../segment/segment-test-helpers';
import type { QueueLeaseBody } from '../../../src/queue-id/queue-lease.controller';
import type { SegmentLeaseBody } from '../../../src/segment/segment-lease.controller';

describe('lease endpoints', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  const queueLease = (appId: number, gatePass: string, count: number | string) =>
    request(app, 'POST', `/api/id/${appId}/lease?gatePass=${encodeURIComponent(gatePass)}&count=${count}`, { token: null });
  const segmentLease = (key: string, count: number | string) =>
    request(app, 'POST', `/api/segment/lease/${encodeURIComponent(key)}?count=${count}`, { token: null });

  beforeAll(async () => {
    env = await createTestEnv('lease');
    app = await startApp(env.config(SEGMENT_TEST_ENV));
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 3, appName: 'lease', step: 100 } })).status).toBe(201);
    expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'orders', step: 50 } })).status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  describe('queue: POST /api/id/{appId}/lease', () => {
    it('leases whole steps of the gatePass shard from id_alloc, disjoint from each other and from the queue', async () => {
      const first = await queueLease(3, 'alice', 150);
      expect(first.status).toBe(200);
      const a = first.json<QueueLeaseBody>();
      expect(a).toEqual({ appId: 3, shard: shardOf('alice'), from: '1', to: '200', count: 200, maxLimitId: '0' });

      // The queue's refill takes the next range of the same row.
      const queued = await request(app, 'GET', '/api/id/3?gatePass=alice&count=5', { token: null });
      const indexes = queued.json<{ ids: string[] }>().ids.map((id) => decomposeQueueId(BigInt(id)).index);
      expect(indexes).toEqual([201n, 202n, 203n, 204n, 205n]);

      const second = (await queueLease(3, 'alice', 1)).json<QueueLeaseBody>();
      expect(second).toEqual({ appId: 3, shard: shardOf('alice'), from: '301', to: '400', count: 100, maxLimitId: '0' });
      const row = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = 3 AND shard_id = ?', [shardOf('alice')])) as Array<{ max_id: string }>;
      expect(String(row[0].max_id)).toBe('400');
    });

    it('cuts a lease exactly at max_limit_id, then answers 410 QUEUE_EXHAUSTED', async () => {
      // appId 4, shard of 'alice': the largest index is 25 (ID 25 << 14 | shard << 8 | 4).
      const shard = shardOf('alice');
      const maxLimitId = ((25n << 14n) | BigInt(shard << 8) | 4n).toString();
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 4, appName: 'small', step: 10, maxLimitId } })).status).toBe(201);
      expect((await queueLease(4, 'alice', 1)).json<QueueLeaseBody>()).toMatchObject({ from: '1', to: '10', maxLimitId });
      expect((await queueLease(4, 'alice', 11)).json<QueueLeaseBody>()).toMatchObject({ from: '11', to: '25', count: 15, maxLimitId });
      expectError(await queueLease(4, 'alice', 1), 410, -5);
    });

    it('reports a max_limit_id lowered after earlier leases, so a client can cut what it holds', async () => {
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 6, appName: 'lowered', step: 10 } })).status).toBe(201);
      expect((await queueLease(6, 'alice', 10)).json<QueueLeaseBody>()).toMatchObject({ from: '1', to: '10', maxLimitId: '0' });
      const lowered = ((15n << 14n) | (63n << 8n) | 6n).toString();
      expect((await request(app, 'PATCH', '/admin/apps/6', { body: { maxLimitId: lowered } })).status).toBe(200);
      expect((await queueLease(6, 'alice', 10)).json<QueueLeaseBody>()).toMatchObject({ maxLimitId: lowered });
    });

    it('answers 404 for an unknown or deleted app; a re-created app resumes above every lease', async () => {
      expectError(await queueLease(200, 'alice', 10), 404, -2);
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'gone', step: 10 } })).status).toBe(201);
      const leased = (await queueLease(5, 'bob', 25)).json<QueueLeaseBody>();
      expect(leased).toMatchObject({ from: '1', to: '30' });
      expect((await request(app, 'DELETE', '/admin/apps/5')).status).toBe(200);
      expectError(await queueLease(5, 'bob', 10), 404, -2);
      expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'again', step: 10 } })).status).toBe(201);
      expect((await queueLease(5, 'bob', 1)).json<QueueLeaseBody>()).toMatchObject({ from: '31', to: '40' });
    });

    it.each([
      ['no count', '/api/id/3/lease?gatePass=alice'],
      ['count 0', '/api/id/3/lease?gatePass=alice&count=0'],
      ['count above the bound', `/api/id/3/lease?gatePass=alice&count=${MAX_LEASE_COUNT + 1}`],
      ['count not a number', '/api/id/3/lease?gatePass=alice&count=12abc'],
      ['count negative', '/api/id/3/lease?gatePass=alice&count=-5'],
      ['no gatePass', '/api/id/3/lease?count=10'],
      ['appId too large', '/api/id/256/lease?gatePass=alice&count=10'],
      ['appId not a number', '/api/id/x/lease?gatePass=alice&count=10'],
    ])('refuses %s with 400 BAD_INPUT', async (_name, url) => {
      expectError(await request(app, 'POST', url, { token: null }), 400, -100);
    });

    it('is POST only: a GET allocates nothing', async () => {
      expectError(await request(app, 'GET', '/api/id/3/lease?gatePass=alice&count=10', { token: null }), 404, -103);
    });
  });

  describe('segment: POST /api/segment/lease/{key}', () => {
    it('leases exactly count IDs from leaf_alloc, disjoint from the generator and from each other', async () => {
      const first = await segmentLease('orders', 70);
      expect(first.status).toBe(200);
      // max_id 1 → 71: the lease owns 1..70 (Leaf's range M .. M+n-1).
      expect(first.json<SegmentLeaseBody>()).toEqual({ key: 'orders', from: '1', to: '70', count: 70 });
      const served = (await request(app, 'GET', '/api/segment/get/orders?count=3', { token: null })).json<{ ids: string[] }>();
      expect(served.ids).toEqual(['71', '72', '73']);
      // The generator took 71..120 (one step of 50); the next lease starts after it.
      expect((await segmentLease('orders', 5)).json<SegmentLeaseBody>()).toEqual({ key: 'orders', from: '121', to: '125', count: 5 });
    });

    it('keeps IDs above 2^53 exact', async () => {
      expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'big', step: 10, maxId: '9007199254740993' } })).status).toBe(201);
      expect((await segmentLease('big', 2)).json<SegmentLeaseBody>()).toMatchObject({ from: '9007199254740993', to: '9007199254740994' });
    });

    it('answers 404 for an unknown or deleted tag, and the tombstone is above every lease', async () => {
      expectError(await segmentLease('nope', 10), 404, -2);
      expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'gone', step: 10 } })).status).toBe(201);
      expect((await segmentLease('gone', 40)).json<SegmentLeaseBody>()).toMatchObject({ from: '1', to: '40' });
      expect((await request(app, 'DELETE', '/admin/segment/tags/gone')).status).toBe(200);
      expectError(await segmentLease('gone', 10), 404, -2);
      expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'gone', step: 10 } })).status).toBe(201);
      expect((await segmentLease('gone', 1)).json<SegmentLeaseBody>()).toMatchObject({ from: '41', to: '41' });
    });

    it('refuses with 409 CONFLICT a tag whose max_id is below 1 (a row made by hand), never leasing IDs below 1', async () => {
      expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'negative', step: 10 } })).status).toBe(201);
      for (const maxId of [-5, 0]) {
        await env.sql("UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = 'negative'", [maxId]);
        expectError(await segmentLease('negative', 3), 409, -105);
        expectError(await segmentLease('negative', 10), 409, -105);
        // Nothing was taken.
        const rows = (await env.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'negative'")) as Array<{ max_id: string }>;
        expect(String(rows[0].max_id)).toBe(String(maxId));
      }
      await env.sql("UPDATE leaf_alloc SET max_id = 1 WHERE biz_tag = 'negative'");
      expect((await segmentLease('negative', 4)).json<SegmentLeaseBody>()).toMatchObject({ from: '1', to: '4' });
    });

    it.each([
      ['no count', '/api/segment/lease/orders'],
      ['count 0', '/api/segment/lease/orders?count=0'],
      ['count above the bound', `/api/segment/lease/orders?count=${MAX_LEASE_COUNT + 1}`],
      ['count fractional', '/api/segment/lease/orders?count=1.5'],
    ])('refuses %s with 400 BAD_INPUT', async (_name, url) => {
      expectError(await request(app, 'POST', url, { token: null }), 400, -100);
    });
  });

  it('counts leases and leased IDs in /metrics', async () => {
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/shardleaf_leases_total\{generator="queue",outcome="granted"\} \d+/);
    expect(res.body).toMatch(/shardleaf_leases_total\{generator="queue",outcome="refused"\} \d+/);
    expect(res.body).toMatch(/shardleaf_lease_ids_total\{generator="segment"\} \d+/);
  });
});

describe('segment lease with SEGMENT_ENABLED=false', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('leaseoff');
    app = await startApp(env.config({ ...SEGMENT_TEST_ENV, SEGMENT_ENABLED: 'false' }));
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('answers 503 SEGMENT_DISABLED', async () => {
    expectError(await request(app, 'POST', '/api/segment/lease/orders?count=10', { token: null }), 503, -200);
  });
});
