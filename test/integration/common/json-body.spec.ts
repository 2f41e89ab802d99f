import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/** `content-type: application/json` with no body (curl -H … -X DELETE) on every admin route. */
describe('JSON bodies', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    env = await createTestEnv('jsonbody');
    app = await startApp(env.config());
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 9, appName: 'nine' } })).status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('an empty body with a JSON content type is no body on routes that take none', async () => {
    const refill = await request(app, 'POST', '/admin/apps/9/refill', { rawBody: '', headers: json });
    expect(refill.status).toBe(200);
    const deleted = await request(app, 'DELETE', '/admin/apps/9', { rawBody: '', headers: json });
    expect(deleted.status).toBe(200);
    // A whitespace-only body is empty too; the app is gone now: the route's own 404.
    expectError(await request(app, 'DELETE', '/admin/apps/9', { rawBody: ' \n', headers: json }), 404, -106);
  });

  it('a route that needs a body still refuses an empty one with BAD_INPUT', async () => {
    const body = expectError(await request(app, 'POST', '/admin/apps', { rawBody: '', headers: json }), 400, -100);
    expect(body.message.length).toBeGreaterThan(0);
  });

  it('malformed JSON and prototype poisoning are still refused with 400', async () => {
    expectError(await request(app, 'POST', '/admin/apps', { rawBody: '{"appId": 1,', headers: json }), 400, -100);
    expectError(
      await request(app, 'POST', '/admin/apps', { rawBody: '{"__proto__": {"x": 1}, "appId": 1}', headers: json }),
      400,
      -100,
    );
  });
});
