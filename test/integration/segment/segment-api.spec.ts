import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';
import { TagView } from '../../../src/segment/segment-admin.service';
import { pollUntil } from '../../support/poll';
import { SEGMENT_TEST_ENV } from './segment-test-helpers';

describe('segment REST API', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segapi');
    app = await startApp(env.config(SEGMENT_TEST_ENV));
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  describe('tags and IDs', () => {
    it('creates a tag (idempotently) and serves its IDs as text and as a batch', async () => {
      const created = await request(app, 'POST', '/admin/segment/tags', {
        body: { tag: 'orders', step: 50, description: 'order ids' },
      });
      expect(created.status).toBe(201);
      expect(created.json()).toMatchObject({ tag: 'orders', maxId: '1', step: 50, description: 'order ids', buffer: {} });
      const again = await request(app, 'POST', '/admin/segment/tags', {
        body: { tag: 'orders', step: 50, description: 'order ids' },
      });
      expect(again.status).toBe(200);
      expectError(await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'orders', step: 60 } }), 409, -105);

      const one = await request(app, 'GET', '/api/segment/get/orders');
      expect(one.status).toBe(200);
      expect(one.contentType).toContain('text/plain');
      expect(one.body).toBe('1');
      const batch = await request(app, 'GET', '/api/segment/get/orders?count=120');
      expect(batch.contentType).toContain('application/json');
      const ids = batch.json<{ ids: string[] }>().ids;
      expect(ids).toEqual(Array.from({ length: 120 }, (_, i) => String(i + 2)));
    });

    it('keeps IDs above 2^53 exact', async () => {
      const res = await request(app, 'POST', '/admin/segment/tags', {
        body: { tag: 'big', step: 10, maxId: '9007199254740993' },
      });
      expect(res.status).toBe(201);
      expect((await request(app, 'GET', '/api/segment/get/big')).body).toBe('9007199254740993');
      expect((await request(app, 'GET', '/api/segment/get/big?count=2')).json()).toEqual({
        ids: ['9007199254740994', '9007199254740995'],
      });
    });

    it('lists, shows, updates and deletes tags', async () => {
      await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'temp', step: 5 } });
      const list = await request(app, 'GET', '/admin/segment/tags');
      expect(list.json<{ tags: Array<{ tag: string }> }>().tags.map((t) => t.tag)).toEqual(
        expect.arrayContaining(['orders', 'big', 'temp']) as unknown,
      );
      await request(app, 'GET', '/api/segment/get/temp');
      // One ID is 20 % of the 5-ID segment 1..5: the next one, 6..10, is fetched in the background.
      const shown = await pollUntil('the next segment of temp', async () => {
        const view = (await request(app, 'GET', '/admin/segment/tags/temp')).json<TagView>();
        return view.buffer?.nextReady ? view : undefined;
      });
      expect(shown).toMatchObject({ tag: 'temp', maxId: '11', step: 5, buffer: { initOk: true, max0: '6', max1: '11' } });

      const patched = await request(app, 'PATCH', '/admin/segment/tags/temp', {
        body: { step: 7, description: 'seven' },
      });
      expect(patched.json()).toMatchObject({ tag: 'temp', step: 7, description: 'seven' });
      const cleared = await request(app, 'PATCH', '/admin/segment/tags/temp', { body: { description: null } });
      expect(cleared.json()).toMatchObject({ step: 7, description: null });

      const deleted = await request(app, 'DELETE', '/admin/segment/tags/temp');
      expect(deleted.json()).toEqual({ tag: 'temp', deleted: true });
      expectError(await request(app, 'GET', '/api/segment/get/temp'), 404, -2);
      expectError(await request(app, 'DELETE', '/admin/segment/tags/temp'), 404, -106);
      expectError(await request(app, 'GET', '/admin/segment/tags/temp'), 404, -106);
      expectError(await request(app, 'PATCH', '/admin/segment/tags/temp', { body: { step: 3 } }), 404, -106);
    });

    it('serves a new step from the next fetch on', async () => {
      await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'grow', step: 10 } });
      await request(app, 'GET', '/api/segment/get/grow');
      await request(app, 'PATCH', '/admin/segment/tags/grow', { body: { step: 100 } });
      const ids = (await request(app, 'GET', '/api/segment/get/grow?count=30')).json<{ ids: string[] }>().ids;
      expect(ids[0]).toBe('2');
      const rows = (await env.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'grow'")) as Array<{ max_id: string }>;
      // One fetch of 10 at init, then at least one of the new DB step 100.
      expect(BigInt(rows[0].max_id)).toBeGreaterThanOrEqual(111n);
    });

    it('answers -2 with a JSON body for an unknown key', async () => {
      const body = expectError(await request(app, 'GET', '/api/segment/get/nope'), 404, -2);
      expect(body.message).toContain('nope');
    });

    it('finds a tag inserted directly into the table without waiting for the sync', async () => {
      await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('by-sql', 1000, 10)");
      // A miss re-reads the tags at most once a second (the test before missed too); no sync runs.
      const first = await pollUntil('a miss to re-read the tags', async () => {
        const res = await request(app, 'GET', '/api/segment/get/by-sql');
        if (res.status === 200) {
          return res.body;
        }
        expectError(res, 404, -2);
        return undefined;
      });
      expect(first).toBe('1000');
    });
  });

  describe('bad input', () => {
    it.each([
      ['a key over 128 characters', `/api/segment/get/${'k'.repeat(129)}`],
      ['a key with a control character', '/api/segment/get/a%01b'],
      ['count 0', '/api/segment/get/orders?count=0'],
      ['count 1001', '/api/segment/get/orders?count=1001'],
      ['count not a number', '/api/segment/get/orders?count=ten'],
      ['count negative', '/api/segment/get/orders?count=-1'],
      ['count empty', '/api/segment/get/orders?count='],
      ['count twice', '/api/segment/get/orders?count=1&count=2'],
    ])('refuses %s with 400', async (_what, url) => {
      expectError(await request(app, 'GET', url), 400, -100);
    });

    it('refuses an empty key with a 4xx JSON error', async () => {
      const res = await request(app, 'GET', '/api/segment/get/');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expectError(res, res.status);
    });

    it('refuses a key longer than the router allows with a 4xx JSON error', async () => {
      // Refused by Fastify's router (maxParamLength); bootstrap's frameworkErrors maps it to BAD_INPUT.
      const res = await request(app, 'GET', `/api/segment/get/${'k'.repeat(600)}`);
      expectError(res, 400, -100);
    });

    it.each([
      ['an array body', [1]],
      ['a string body', 'tag'],
      ['no tag', { step: 10 }],
      ['an empty tag', { tag: '' }],
      ['a tag with a space', { tag: 'a b' }],
      ['a tag with a slash', { tag: 'a/b' }],
      ['a tag over 128 characters', { tag: 't'.repeat(129) }],
      ['a numeric tag', { tag: 12 }],
      ['step 0', { tag: 'x', step: 0 }],
      ['a fractional step', { tag: 'x', step: 1.5 }],
      ['step over the maximum', { tag: 'x', step: 1_000_001 }],
      ['a step string', { tag: 'x', step: 'ten' }],
      ['maxId 0', { tag: 'x', maxId: 0 }],
      ['maxId above 2^62', { tag: 'x', maxId: '4611686018427387905' }],
      ['a negative maxId', { tag: 'x', maxId: -5 }],
      ['a description over 256 characters', { tag: 'x', description: 'd'.repeat(257) }],
      ['an unknown field', { tag: 'x', colour: 'red' }],
    ])('refuses a create with %s', async (_what, body) => {
      expectError(await request(app, 'POST', '/admin/segment/tags', { body }), 400, -100);
      expectError(await request(app, 'GET', '/admin/segment/tags/x'), 404, -106);
    });

    it('refuses malformed JSON and a non-JSON content type', async () => {
      const malformed = await request(app, 'POST', '/admin/segment/tags', {
        rawBody: '{"tag":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400);
      const text = await request(app, 'POST', '/admin/segment/tags', {
        rawBody: 'tag=x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBeGreaterThanOrEqual(400);
      expect(text.status).toBeLessThan(500);
      expectError(text, text.status);
    });

    it.each([
      ['an empty patch', {}],
      ['a patch of maxId', { maxId: 5 }],
      ['step 0', { step: 0 }],
      ['a numeric description', { description: 5 }],
    ])('refuses %s', async (_what, body) => {
      expectError(await request(app, 'PATCH', '/admin/segment/tags/orders', { body }), 400, -100);
    });

    it('refuses a bad tag in an admin path', async () => {
      expectError(await request(app, 'GET', `/admin/segment/tags/${'t'.repeat(129)}`), 400, -100);
      expectError(await request(app, 'DELETE', '/admin/segment/tags/a%00b'), 400, -100);
    });

    it.each([
      ['POST', '/admin/segment/tags'],
      ['GET', '/admin/segment/tags'],
      ['GET', '/admin/segment/tags/orders'],
      ['PATCH', '/admin/segment/tags/orders'],
      ['DELETE', '/admin/segment/tags/orders'],
      ['GET', '/admin/segment/cache'],
      ['GET', '/admin/segment/db'],
    ] as const)('refuses %s %s without a valid token with 401', async (method, url) => {
      const body = method === 'POST' || method === 'PATCH' ? { tag: 'orders', step: 1 } : undefined;
      expectError(await request(app, method, url, { body, token: null }), 401, -101);
      expectError(await request(app, method, url, { body, token: 'wrong-token-value' }), 401, -101);
    });

    it('left the tag untouched by every refused request', async () => {
      const shown = await request(app, 'GET', '/admin/segment/tags/orders');
      expect(shown.json()).toMatchObject({ tag: 'orders', step: 50, description: 'order ids' });
    });
  });
});
