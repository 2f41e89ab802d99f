import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

/** Two instances on one database, 1,000 concurrent requests each: every number once. */
describe('formatted numbers: two instances under concurrent load', () => {
  const suite = appSuite('numconc');
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  beforeAll(async () => {
    // A generous bound: 2,000 requests in flight on a loaded 2-core machine are no frozen database.
    const env = { SNOWFLAKE_MODE: 'off', DB_QUERY_TIMEOUT_MS: '20000' };
    a = await suite.start(env);
    b = await suite.start(env);
    const created = await request(a, 'POST', '/admin/numbers', {
      body: { key: 'ord', pattern: 'ORD{yyyyMMdd}{seq:6}', reset: 'daily', step: 50 },
    });
    expect(created.status).toBe(201);
  });

  it('1,000 concurrent requests on each of two instances: 2,000 distinct numbers', async () => {
    const get = (app: NestFastifyApplication) => request(app, 'GET', '/api/number/ord', { token: null });
    const replies = await Promise.all([...Array.from({ length: 1000 }, () => get(a)), ...Array.from({ length: 1000 }, () => get(b))]);
    const failed = replies.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body}`);
    expect(failed.slice(0, 5)).toEqual([]);
    const numbers = replies.map((r) => r.body);
    expect(new Set(numbers).size).toBe(2000);
    for (const n of numbers) {
      expect(n).toMatch(/^ORD\d{8}\d{6}$/);
    }
  });

  it('batches from both instances do not overlap either', async () => {
    const batch = (app: NestFastifyApplication) => request(app, 'GET', '/api/number/ord?count=100', { token: null });
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => batch(i % 2 === 0 ? a : b)));
    const numbers = replies.flatMap((r) => r.json<{ numbers: string[] }>().numbers);
    expect(numbers).toHaveLength(4000);
    expect(new Set(numbers).size).toBe(4000);
  });
});
