import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';
import { QUIET_ENV } from './snowflake-harness';

describe('snowflake HTTP routes (mysql mode)', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('sf_http');
    app = await startApp(env.config({ ...QUIET_ENV, SNOWFLAKE_MODE: 'mysql', SNOWFLAKE_IP: '127.0.0.1', SNOWFLAKE_PORT: '18080' }));
  });

  afterAll(async () => {
    await app.close();
    await env.cleanup();
  });

  it('GET /api/snowflake/get/{key} answers one ID as text/plain', async () => {
    const res = await request(app, 'GET', '/api/snowflake/get/leaf-segment-test');
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('text/plain');
    expect(res.body).toMatch(/^[1-9][0-9]{15,18}$/);
    const decoded = decodeId(BigInt(res.body), DEFAULT_TWEPOCH);
    expect(Math.abs(decoded.timestamp - Date.now())).toBeLessThan(60_000);
    expect(decoded.workerId).toBe(1); // the first leaf_workerid_alloc row
  });

  it('?count=N answers JSON {ids} of N increasing decimal strings', async () => {
    const res = await request(app, 'GET', '/api/snowflake/get/any?count=1000');
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('application/json');
    const ids = res.json<{ ids: string[] }>().ids;
    expect(ids).toHaveLength(1000);
    expect(ids.every((id) => typeof id === 'string' && /^[0-9]+$/.test(id))).toBe(true);
    const values = ids.map((id) => BigInt(id));
    expect(values.every((v, i) => i === 0 || v > values[i - 1])).toBe(true);
  });

  it('decodes an ID it issued', async () => {
    const id = (await request(app, 'GET', '/api/snowflake/get/t')).body;
    const res = await request(app, 'GET', `/api/snowflake/decode/${id}`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual(decodeId(BigInt(id), DEFAULT_TWEPOCH));
  });

  it('decodes the largest ID', async () => {
    const res = await request(app, 'GET', '/api/snowflake/decode/9223372036854775807');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ workerId: 1023, sequence: 4095, timestamp: DEFAULT_TWEPOCH + 2 ** 41 - 1 });
  });

  it('tells its time', async () => {
    const res = await request(app, 'GET', '/api/snowflake/time');
    expect(res.status).toBe(200);
    const body = res.json<{ timestamp: number; isoTime: string }>();
    expect(Math.abs(body.timestamp - Date.now())).toBeLessThan(60_000);
    expect(new Date(body.isoTime).getTime()).toBe(body.timestamp);
  });

  it.each([
    ['/api/snowflake/get/bad%20key', 'a key with a space'],
    [`/api/snowflake/get/${'k'.repeat(129)}`, 'a key longer than 128'],
    ['/api/snowflake/get/k%2Fk', 'a key with a slash'],
    ['/api/snowflake/get/k?count=0', 'count 0'],
    ['/api/snowflake/get/k?count=1001', 'count above 1000'],
    ['/api/snowflake/get/k?count=abc', 'a non-numeric count'],
    ['/api/snowflake/get/k?count=-1', 'a negative count'],
    ['/api/snowflake/get/k?count=1&count=2', 'a repeated count'],
    ['/api/snowflake/decode/abc', 'a non-numeric id'],
    ['/api/snowflake/decode/-1', 'a negative id'],
    ['/api/snowflake/decode/1.5', 'a fractional id'],
    ['/api/snowflake/decode/9223372036854775808', 'an id of 2^63'],
    ['/api/snowflake/decode/99999999999999999999', 'a 20-digit id'],
  ])('refuses %s (%s) with a 400 JSON error', async (url) => {
    expectError(await request(app, 'GET', url), 400, -100);
  });

  it('answers unknown snowflake routes and methods with JSON errors', async () => {
    expectError(await request(app, 'GET', '/api/snowflake/get'), 404);
    expectError(await request(app, 'GET', '/api/snowflake/nope/1'), 404);
    const post = await request(app, 'POST', '/api/snowflake/get/k', { body: {} });
    expect(post.status).toBeGreaterThanOrEqual(400);
    expect(post.status).toBeLessThan(500);
    expect(post.json()).toHaveProperty('code');
  });
});

describe('snowflake mode off', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('sf_off');
    app = await startApp(env.config({ ...QUIET_ENV, SNOWFLAKE_MODE: 'off' }));
  });

  afterAll(async () => {
    await app.close();
    await env.cleanup();
  });

  it('refuses to issue with SNOWFLAKE_DISABLED but still decodes', async () => {
    expectError(await request(app, 'GET', '/api/snowflake/get/k'), 503, -214);
    expectError(await request(app, 'GET', '/api/snowflake/get/k?count=2'), 503, -214);
    expect((await request(app, 'GET', '/api/snowflake/decode/4198401')).json()).toMatchObject({
      workerId: 1,
      sequence: 1,
    });
  });
});
