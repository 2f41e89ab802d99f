import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { composeQueueId, decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

describe('queue ID REST API and admin API', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('qapi');
    app = await startApp(env.config());
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  describe('admin authentication', () => {
    it.each([
      ['GET', '/admin/apps'],
      ['POST', '/admin/apps'],
      ['GET', '/admin/apps/1'],
      ['PATCH', '/admin/apps/1'],
      ['DELETE', '/admin/apps/1'],
      ['POST', '/admin/apps/1/refill'],
    ] as const)('%s %s is refused with 401 without a token or with a wrong one', async (method, url) => {
      expectError(await request(app, method, url, { token: null, body: { appId: 1, appName: 'x' } }), 401, -101);
      expectError(await request(app, method, url, { token: 'wrong-token-123', body: { appId: 1, appName: 'x' } }), 401, -101);
      expectError(
        await request(app, method, url, { token: null, headers: { authorization: 'Basic dGVzdA==' }, body: {} }),
        401,
        -101,
      );
    });

    it('is disabled (403) when ADMIN_TOKEN is unset, not open', async () => {
      const closed = await startApp(env.config({ ADMIN_TOKEN: '' }));
      try {
        const body = expectError(await request(closed, 'GET', '/admin/apps'), 403, -102);
        expect(body.message).toContain('ADMIN_TOKEN');
      } finally {
        await closed.close();
      }
    });
  });

  describe('apps', () => {
    it('creates 64 shards (201), is idempotent (200) and refuses a conflicting re-create (409)', async () => {
      const created = await request(app, 'POST', '/admin/apps', {
        body: { appId: 1, appName: 'demo', description: 'demo app' },
      });
      expect(created.status).toBe(201);
      const detail = created.json<{ shardCount: number; step: number; shards: Array<{ maxId: string }> }>();
      expect(detail.shardCount).toBe(64);
      expect(detail.step).toBe(1000);
      expect(detail.shards.every((s) => s.maxId === '0')).toBe(true);

      const again = await request(app, 'POST', '/admin/apps', {
        body: { appId: 1, appName: 'demo', description: 'demo app' },
      });
      expect(again.status).toBe(200);
      expectError(await request(app, 'POST', '/admin/apps', { body: { appId: 1, appName: 'other' } }), 409, -105);
      const rows = (await env.sql('SELECT COUNT(*) AS n FROM id_alloc WHERE app_id = 1')) as Array<{ n: string }>;
      expect(Number(rows[0].n)).toBe(64);
    });

    it('issues a text/plain ID whose bits name the gatePass shard and the app', async () => {
      const res = await request(app, 'GET', '/api/id/1?gatePass=alice', { token: null });
      expect(res.status).toBe(200);
      expect(res.contentType).toContain('text/plain');
      // alice → Java hashCode 92903040 → shard 0; first index after alloc_initData is 1.
      expect(res.body).toBe(composeQueueId(1n, 0, 1).toString());
      expect(res.body).toBe('16385');
      const next = await request(app, 'GET', '/api/id/1?gatePass=alice', { token: null });
      expect(next.body).toBe('32769');
    });

    it('serves the ID route with its own hooks: after a request none is left on it (common/direct-routes/direct-lifecycle.ts)', async () => {
      expect((await request(app, 'GET', '/api/id/1?gatePass=alice', { token: null })).status).toBe(200);
      const routes = app.getHttpAdapter().getInstance().printRoutes({ includeHooks: true, commonPrefix: false });
      // The route's line and the hook lines under it, up to the next route (its HEAD twin).
      const lines = routes.split('\n');
      const at = lines.findIndex((line) => line.endsWith('api/id/:appId (GET)'));
      expect(at).toBeGreaterThanOrEqual(0);
      const next = lines.findIndex((line, i) => i > at && line.includes('(HEAD)'));
      expect(lines.slice(at + 1, next).filter((line) => /\((onRequest|onSend|onResponse|preHandler)\)/.test(line))).toEqual([]);
      // Its HEAD twin keeps Fastify's (a route onSend hook of its own).
      expect(lines[next + 1]).toMatch(/\(onRequest\)/);
    });

    it('issues a JSON batch with count, all on the gatePass shard', async () => {
      const res = await request(app, 'GET', '/api/id/1?gatePass=13800138000&count=1000', { token: null });
      expect(res.status).toBe(200);
      expect(res.contentType).toContain('application/json');
      const { ids } = res.json<{ ids: string[] }>();
      expect(ids).toHaveLength(1000);
      expect(new Set(ids).size).toBe(1000);
      for (const id of ids) {
        expect(typeof id).toBe('string');
        const parts = decomposeQueueId(BigInt(id));
        expect(parts.shardId).toBe(shardOf('13800138000'));
        expect(parts.appId).toBe(1);
      }
    });

    it('lists apps and shows per-shard max_id, step, queue length and remaining capacity', async () => {
      const list = await request(app, 'GET', '/admin/apps');
      expect(list.status).toBe(200);
      const apps = list.json<{ apps: Array<{ appId: number; shardCount: number }> }>().apps;
      expect(apps.map((a) => a.appId)).toContain(1);
      const detail = (await request(app, 'GET', '/admin/apps/1')).json<{
        jsSafeMaxIndex: string;
        shards: Array<{ shardId: number; maxId: string; step: number; queueLength: number; remainingCapacity: string; jsSafe: boolean }>;
      }>();
      expect(detail.shards).toHaveLength(64);
      // Indexes up to 2^39 - 1 keep every ID of the app below 2^53.
      expect(detail.jsSafeMaxIndex).toBe('549755813887');
      expect(detail.shards.every((s) => s.jsSafe)).toBe(true);
      const shard0 = detail.shards[0];
      expect(shard0.step).toBe(1000);
      expect(BigInt(shard0.maxId)).toBeGreaterThanOrEqual(1000n);
      expect(shard0.queueLength).toBeGreaterThan(0);
      expect(BigInt(shard0.remainingCapacity)).toBeGreaterThan(0n);
    });

    it('refills every shard on POST /admin/apps/{id}/refill and the queue depth grows', async () => {
      const before = (await request(app, 'GET', '/admin/apps/1')).json<{ queueLength: number }>().queueLength;
      const res = await request(app, 'POST', '/admin/apps/1/refill');
      expect(res.status).toBe(200);
      expect(res.json<{ refilled: number }>().refilled).toBe(64);
      const after = (await request(app, 'GET', '/admin/apps/1')).json<{ queueLength: number }>().queueLength;
      expect(after).toBe(before + 64 * 1000);
    });

    it('patches step, name, description and limit', async () => {
      const res = await request(app, 'PATCH', '/admin/apps/1', {
        body: { step: 500, appName: 'demo2', description: null, maxLimitId: '9223372036854775807' },
      });
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ step: 500, appName: 'demo2', description: null, maxLimitId: '9223372036854775807' });
      expectError(await request(app, 'PATCH', '/admin/apps/77', { body: { step: 5 } }), 404, -106);
    });

    it('finds an app created on another instance without waiting for the reload', async () => {
      const other = await startApp(env.config());
      try {
        expect((await request(other, 'POST', '/admin/apps', { body: { appId: 2, appName: 'late' } })).status).toBe(201);
        const res = await request(app, 'GET', '/api/id/2?gatePass=bob', { token: null });
        expect(res.status).toBe(200);
        expect(decomposeQueueId(BigInt(res.body))).toMatchObject({ appId: 2, shardId: 53 });
      } finally {
        await other.close();
      }
    });

    it('deletes an app: rows and Redis lists go, its IDs are refused with -2', async () => {
      await request(app, 'GET', '/api/id/2?gatePass=x', { token: null });
      const res = await request(app, 'DELETE', '/admin/apps/2');
      expect(res.status).toBe(200);
      expect(res.json<{ deletedRows: number; deletedLists: number }>().deletedRows).toBe(64);
      expect(res.json<{ deletedLists: number }>().deletedLists).toBeGreaterThan(0);
      expect(await env.redis.keys(`${env.keyPrefix}idList_2_*`)).toEqual([]);
      expectError(await request(app, 'GET', '/api/id/2?gatePass=x', { token: null }), 404, -2);
      expectError(await request(app, 'DELETE', '/admin/apps/2'), 404, -106);
    });
  });

  describe('bad input never gives a 5xx', () => {
    const long = 'x'.repeat(257);
    it.each([
      ['/api/id/abc?gatePass=a', 400],
      ['/api/id/-1?gatePass=a', 400],
      ['/api/id/256?gatePass=a', 400],
      ['/api/id/1.5?gatePass=a', 400],
      ['/api/id/99999999999999999999999?gatePass=a', 400],
      ['/api/id/%F0%9F%98%80?gatePass=a', 400],
      ['/api/id/%ZZ?gatePass=a', 400],
      [`/api/id/${'1'.repeat(600)}?gatePass=a`, 400],
      ['/api/id/1', 400],
      ['/api/id/1?gatePass=', 400],
      [`/api/id/1?gatePass=${long}`, 400],
      ['/api/id/1?gatePass=a&gatePass=b', 400],
      ['/api/id/1?gatePass=a&count=0', 400],
      ['/api/id/1?gatePass=a&count=1001', 400],
      ['/api/id/1?gatePass=a&count=-5', 400],
      ['/api/id/1?gatePass=a&count=abc', 400],
      ['/api/id/1?gatePass=a&count=', 400],
      ['/api/id/1?gatePass=a&count=1e3', 400],
      ['/api/id/1?gatePass=a&count=1&count=2', 400],
      ['/api/id/200?gatePass=a', 404],
      ['/api/id/', 404],
      ['/api/nothing', 404],
      ['/admin/apps/abc', 400],
      ['/admin/apps/300', 400],
    ])('GET %s → %d JSON', async (url, status) => {
      const res = await request(app, 'GET', url);
      expectError(res, status);
    });

    it('answers a wrong method with a 4xx JSON error', async () => {
      const res = await request(app, 'PUT', '/api/id/1?gatePass=a');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expectError(res, res.status);
    });

    it.each([
      ['not JSON', { rawBody: '{bad', headers: { 'content-type': 'application/json' } }, 400],
      ['an array', { body: [1, 2] }, 400],
      ['a string', { body: 'x' }, 400],
      ['an empty object', { body: {} }, 400],
      ['appId out of range', { body: { appId: 256, appName: 'x' } }, 400],
      ['appId negative', { body: { appId: -1, appName: 'x' } }, 400],
      ['appId fractional', { body: { appId: 1.5, appName: 'x' } }, 400],
      ['appId as bool', { body: { appId: true, appName: 'x' } }, 400],
      ['missing appName', { body: { appId: 3 } }, 400],
      ['empty appName', { body: { appId: 3, appName: '' } }, 400],
      ['appName too long', { body: { appId: 3, appName: 'n'.repeat(129) } }, 400],
      ['step zero', { body: { appId: 3, appName: 'x', step: 0 } }, 400],
      ['step too big', { body: { appId: 3, appName: 'x', step: 10_000_001 } }, 400],
      ['maxLimitId negative', { body: { appId: 3, appName: 'x', maxLimitId: -1 } }, 400],
      ['maxLimitId above int64', { body: { appId: 3, appName: 'x', maxLimitId: '9223372036854775808' } }, 400],
      ['maxLimitId unsafe number', { body: { appId: 3, appName: 'x', maxLimitId: 2 ** 60 } }, 400],
      ['unknown field', { body: { appId: 3, appName: 'x', foo: 1 } }, 400],
      ['description not a string', { body: { appId: 3, appName: 'x', description: 5 } }, 400],
      ['wrong content type', { rawBody: '<a/>', headers: { 'content-type': 'application/xml' } }, 415],
      ['too large', { rawBody: JSON.stringify({ appId: 3, appName: 'x'.repeat(70_000) }), headers: { 'content-type': 'application/json' } }, 413],
    ])('POST /admin/apps with %s is refused', async (_name, options, status) => {
      expectError(await request(app, 'POST', '/admin/apps', options), status);
    });

    it.each([
      ['an empty patch', {}, 400],
      ['step as string word', { step: 'big' }, 400],
      ['appId in a patch', { appId: 5 }, 400],
      ['null appName', { appName: null }, 400],
    ])('PATCH /admin/apps/1 with %s is refused', async (_name, body, status) => {
      expectError(await request(app, 'PATCH', '/admin/apps/1', { body }), status);
    });

    it('refuses a maxLimitId that would leave a shard without index 1, on POST and PATCH, naming the minimum', async () => {
      // appId 3: minimum (1 << 14) | (63 << 8) | 3 = 32515; below it shard 63 is exhausted at creation.
      for (const maxLimitId of ['1', '16387', '32512']) {
        const created = expectError(
          await request(app, 'POST', '/admin/apps', { body: { appId: 3, appName: 'x', maxLimitId } }),
          400,
          -100,
        );
        expect(created.message).toContain('32515');
        // appId 1 (from the path): minimum 32513.
        const patched = expectError(await request(app, 'PATCH', '/admin/apps/1', { body: { maxLimitId } }), 400, -100);
        expect(patched.message).toContain('32513');
      }
      expectError(await request(app, 'GET', '/admin/apps/3'), 404, -106);
      const ok = await request(app, 'POST', '/admin/apps', { body: { appId: 3, appName: 'x', maxLimitId: '32515' } });
      expect(ok.status).toBe(201);
      expect(ok.json<{ exhaustedShards: number }>().exhaustedShards).toBe(0);
      expect((await request(app, 'DELETE', '/admin/apps/3')).status).toBe(200);
    });

    it('is still serving after all of that', async () => {
      expect((await request(app, 'GET', '/api/id/1?gatePass=alice', { token: null })).status).toBe(200);
    });
  });
});
