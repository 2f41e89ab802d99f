import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { readinessUntil } from '../../support/readiness';
import { appSuite } from '../../support/app-suite';
import { expectError, request } from '../../support/test-env';

/**
 * SEGMENT_ENABLED=false and SNOWFLAKE_MODE=off: readiness, /metrics and /admin/snowflake read
 * each generator through the status its feature module exports, and report "off", not "down".
 */
describe('readiness, metrics and admin with segment and snowflake off', () => {
  const suite = appSuite('gensoff');
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await suite.start({ SEGMENT_ENABLED: 'false', SNOWFLAKE_MODE: 'off' });
    // A tag a running segment generator would load on the miss below.
    await suite.env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('t', 1, 10)");
    expectError(await request(app, 'GET', '/api/segment/get/t', { token: null }), 503, -200);
  });

  it('is ready with the queue alone, the others reported as off (null)', async () => {
    const ready = await readinessUntil(app, 200);
    expect(ready.info?.generators).toEqual({ status: 'up', queue: true, segment: null, snowflake: null });
  });

  it('shows no segment buffers and no snowflake worker id on /metrics', async () => {
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).not.toMatch(/^shardleaf_segment_(buffer_remaining|buffer_step|next_ready)\{/m);
    expect(res.body).toMatch(/^shardleaf_snowflake_worker_id\{mode="off"\} -1$/m);
    expect(res.body).toMatch(/^shardleaf_snowflake_serving\{mode="off"\} 0$/m);
  });

  it('answers GET /admin/snowflake with the mode off and no worker id', async () => {
    const res = await request(app, 'GET', '/admin/snowflake');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ mode: 'off', workerId: null, serving: false, lastReport: null, recordedUntil: null });
  });
});
