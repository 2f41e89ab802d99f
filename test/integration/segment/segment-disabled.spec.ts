import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

describe('segment mode switched off', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segoff');
    app = await startApp(env.config({ SEGMENT_ENABLED: 'false' }));
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('t', 1, 10)");
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it.each([
    ['GET', '/api/segment/get/t'],
    ['GET', '/api/segment/get/t?count=5'],
    ['GET', '/admin/segment/tags'],
    ['POST', '/admin/segment/tags'],
    ['GET', '/admin/segment/tags/t'],
    ['PATCH', '/admin/segment/tags/t'],
    ['DELETE', '/admin/segment/tags/t'],
    ['GET', '/admin/segment/cache'],
    ['GET', '/admin/segment/db'],
  ] as const)('answers %s %s with SEGMENT_DISABLED, not an ID', async (method, url) => {
    const body = method === 'POST' ? { tag: 'u', step: 5 } : method === 'PATCH' ? { step: 5 } : undefined;
    const res = expectError(await request(app, method, url, { body }), 503, -200);
    expect(res.message).toContain('SEGMENT_ENABLED');
  });

  it('still checks the admin token first', async () => {
    expectError(await request(app, 'GET', '/admin/segment/cache', { token: null }), 401, -101);
  });

  it('changed nothing in leaf_alloc', async () => {
    expect(await env.sql('SELECT biz_tag, max_id, step FROM leaf_alloc')).toEqual([{ biz_tag: 't', max_id: '1', step: 10 }]);
  });
});
