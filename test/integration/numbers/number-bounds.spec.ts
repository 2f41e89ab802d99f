import { createConnection } from 'mysql2/promise';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appSuite } from '../../support/app-suite';
import { BOUNDS_AT_DEFAULTS, expectError, request, testMysqlOptions } from '../../support/test-env';

/**
 * Every database call of the number formats is bounded, as every MySQL call (DB_QUERY_TIMEOUT_MS,
 * infra/database/bounded-pool.ts): an allocation stuck behind a row lock answers 503, its
 * connection is destroyed rather than returned to the pool with the statement still on it, and the
 * number it might have allocated is a gap.
 */
describe('formatted numbers: time-bounded database calls', () => {
  const suite = appSuite('numbounds');
  let app: NestFastifyApplication;
  const one = (key: string) => request(app, 'GET', `/api/number/${key}`, { token: null });

  beforeAll(async () => {
    // A pool of 2: stuck connections handed back to it would leave none for the next request.
    app = await suite.start({ ...BOUNDS_AT_DEFAULTS, SNOWFLAKE_MODE: 'off', DB_POOL_SIZE: '2' });
    for (const key of ['locked', 'free']) {
      expect((await request(app, 'POST', '/admin/numbers', { body: { key, pattern: `${key}-{seq:6}`, step: 1 } })).status).toBe(201);
    }
  });

  it('an allocation behind a held row lock answers 503 BACKEND_UNAVAILABLE; other formats go on; nothing repeats after', async () => {
    expect((await one('locked')).body).toBe('locked-000001');
    const conn = await createConnection(testMysqlOptions(suite.env.database));
    await conn.beginTransaction();
    await conn.query("SELECT fmt_key FROM number_format WHERE fmt_key = 'locked' FOR UPDATE");
    try {
      // A number preloaded before the lock may still be served; the next allocation is stuck.
      let first = await one('locked');
      if (first.status === 200) {
        first = await one('locked');
      }
      expectError(first, 503, -109);
      for (let i = 0; i < 4; i++) {
        expectError(await one('locked'), 503, -109);
      }
      // The pool still serves: the four stuck connections were destroyed, not handed back.
      expect((await one('free')).body).toBe('free-000001');
      expect((await request(app, 'GET', '/admin/numbers/free')).status).toBe(200);
    } finally {
      await conn.commit();
      await conn.end();
    }
    const after = await one('locked');
    expect(after.status).toBe(200);
    expect(after.body > 'locked-000001').toBe(true);
  });
});
