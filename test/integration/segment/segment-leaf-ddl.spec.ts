import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { LEAF_DDL, LEAF_README_ROW, SEGMENT_TEST_ENV } from './segment-test-helpers';

describe('segment mode on a table made by Leaf\'s own leaf_alloc.sql', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segddl');
    await env.sql(LEAF_DDL);
    await env.sql(LEAF_README_ROW);
    app = await startApp(env.config(SEGMENT_TEST_ENV));
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('adopts the table and hands out 1, 2, 3 … as Leaf does', async () => {
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(app, 'GET', '/api/segment/get/leaf-segment-test');
      expect(res.status).toBe(200);
      expect(res.contentType).toContain('text/plain');
      got.push(res.body);
    }
    expect(got).toEqual(['1', '2', '3']);
    const batch = await request(app, 'GET', '/api/segment/get/leaf-segment-test?count=3');
    expect(batch.json()).toEqual({ ids: ['4', '5', '6'] });
    const rows = (await env.sql('SELECT max_id, step, description FROM leaf_alloc')) as Array<Record<string, unknown>>;
    expect(rows).toEqual([{ max_id: '2001', step: 2000, description: 'Test leaf Segment Mode Get Id' }]);
  });

  it('shows the row in the admin views as Leaf\'s /db and /cache pages do', async () => {
    const db = await request(app, 'GET', '/admin/segment/db');
    expect(db.json()).toEqual({
      rows: [
        expect.objectContaining({ tag: 'leaf-segment-test', maxId: '2001', step: 2000 }) as unknown,
      ],
    });
    const cache = await request(app, 'GET', '/admin/segment/cache');
    expect(cache.json()).toMatchObject({
      initialised: true,
      buffers: [{ key: 'leaf-segment-test', initOk: true, pos: 0, value0: '7', max0: '2001', step0: 2000 }],
    });
  });

  it('deleting and re-creating the tag through the admin API resumes above Leaf\'s max_id', async () => {
    expect((await request(app, 'DELETE', '/admin/segment/tags/leaf-segment-test')).status).toBe(200);
    const again = await request(app, 'POST', '/admin/segment/tags', {
      body: { tag: 'leaf-segment-test', step: 2000, description: 'Test leaf Segment Mode Get Id' },
    });
    expect(again.status).toBe(201);
    expect(again.json()).toMatchObject({ maxId: '2001' });
    expect((await request(app, 'GET', '/api/segment/get/leaf-segment-test')).body).toBe('2001');
  });
});
