import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { maxIndexFor } from '../../../src/queue-id/core/queue-id-layout';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));

/** The value of one sample, e.g. `shardleaf_ids_issued_total{generator="queue"}`. */
function sample(text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1));
}

/** Runs `promtool check metrics` on the exposition; resolves its combined output. */
function promtoolCheck(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(PROMTOOL as string, ['check', 'metrics'], (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
    child.stdin?.end(text);
  });
}

describe('Prometheus /metrics', () => {
  const suite = appSuite('metrics');
  let app: NestFastifyApplication;
  let text: string;

  beforeAll(async () => {
    app = await suite.start();
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 3, appName: 'metrics', step: 100, maxLimitId: '1638400000' } })).status).toBe(201);
    // Known traffic: 1 + 5 queue IDs on alice's shard (0), 2 segment IDs, 3 snowflake IDs, errors.
    expect((await request(app, 'GET', '/api/id/3?gatePass=alice', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/id/3?gatePass=alice&count=5', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/id/3?gatePass=', { token: null })).status).toBe(400);
    expect((await request(app, 'GET', '/api/id/9?gatePass=bob', { token: null })).status).toBe(404);
    expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'orders', step: 50 } })).status).toBe(201);
    expect((await request(app, 'GET', '/api/segment/get/orders?count=2', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/snowflake/get/any?count=3', { token: null })).status).toBe(200);
    expect((await request(app, 'POST', '/admin/numbers', { body: { key: 'm', pattern: 'M{seq:4}', step: 10 } })).status).toBe(201);
    expect((await request(app, 'GET', '/api/number/m?count=3', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/number/m', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/number/none', { token: null })).status).toBe(404);
    // Errors mapped by the ErrorFilter (a Nest route, Fastify's body parser, the not-found handler).
    expect((await request(app, 'GET', '/admin/apps/x')).status).toBe(400);
    expect((await request(app, 'POST', '/admin/apps', { rawBody: '{', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await request(app, 'GET', '/nowhere', { token: null })).status).toBe(404);
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('text/plain');
    text = res.body;
  });

  it('counts IDs issued by generator', () => {
    expect(sample(text, 'shardleaf_ids_issued_total{generator="queue"}')).toBe(6);
    expect(sample(text, 'shardleaf_ids_issued_total{generator="segment"}')).toBe(2);
    expect(sample(text, 'shardleaf_ids_issued_total{generator="snowflake"}')).toBe(3);
  });

  it('counts formatted numbers by format, their allocations, and what this instance holds', () => {
    expect(sample(text, 'shardleaf_numbers_issued_total{format="m"}')).toBe(4);
    expect(sample(text, 'shardleaf_number_allocations_total{outcome="allocated"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'shardleaf_number_allocations_total{outcome="not_found"}')).toBe(1);
    expect(sample(text, 'shardleaf_number_clock_reads_total{outcome="period_over"}')).toBe(0);
    expect(sample(text, 'shardleaf_number_segment_left{format="m"}')).toBeGreaterThan(0);
    expect(sample(text, 'shardleaf_http_errors_total{route="/api/number/:key",status="404",error="NUMBER_FORMAT_NOT_FOUND"}')).toBe(1);
  });

  it('counts requests by route pattern and status, and errors by kind', () => {
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="/api/id/:appId",status="200"}')).toBe(2);
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="/api/id/:appId",status="400"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/api/id/:appId",status="400",error="BAD_INPUT"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/api/id/:appId",status="404",error="QUEUE_APP_NOT_FOUND"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/admin/apps/:appId",status="400",error="BAD_INPUT"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/admin/apps",status="400",error="BAD_INPUT"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="unmatched",status="404",error="ROUTE_NOT_FOUND"}')).toBe(1);
  });

  it('reports queue length per shard, remaining capacity per app and the on-demand refill', () => {
    // Shard 0 got one step of 100 on demand; 6 IDs were taken from it.
    expect(sample(text, 'shardleaf_queue_length{app="3",shard="0"}')).toBe(94);
    expect(sample(text, 'shardleaf_queue_length{app="3",shard="1"}')).toBe(0);
    expect(sample(text, 'shardleaf_queue_refills_total{trigger="demand",outcome="refilled"}')).toBe(1);
    expect(sample(text, 'shardleaf_queue_refill_duration_seconds_count{trigger="demand"}')).toBe(1);
    // Every index up to the limit of max_limit_id, less the 6 handed out (the rest of shard 0's step is queued).
    let limit = 0n;
    for (let shard = 0; shard < 64; shard++) {
      limit += maxIndexFor(3, shard, 1638400000n);
    }
    expect(sample(text, 'shardleaf_queue_remaining_capacity{app="3"}')).toBe(Number(limit) - 6);
    // The read behind these gauges reached both backends.
    expect(sample(text, 'shardleaf_backend_up{backend="mysql"}')).toBe(1);
    expect(sample(text, 'shardleaf_backend_up{backend="redis"}')).toBe(1);
  });

  it('reports segment buffers and the snowflake worker', () => {
    expect(sample(text, 'shardleaf_segment_buffer_step{tag="orders",buffer="current"}')).toBe(50);
    expect(sample(text, 'shardleaf_segment_buffer_remaining{tag="orders",buffer="current"}')).toBeGreaterThan(0);
    expect(text).toContain('shardleaf_segment_next_ready{tag="orders"}');
    expect(sample(text, 'shardleaf_snowflake_serving{mode="mysql"}')).toBe(1);
    expect(sample(text, 'shardleaf_snowflake_worker_id{mode="mysql"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'shardleaf_snowflake_clock_rollback_waits_total')).toBe(0);
  });

  it('passes promtool check metrics (or the exposition parser where promtool is missing)', async () => {
    if (PROMTOOL !== undefined) {
      const result = await promtoolCheck(text);
      // prom-client's own default gauges are named *_total, which promtool's lint flags; ours must be clean.
      const problems = result.output
        .split('\n')
        .filter((l) => l !== '' && !/^shardleaf_nodejs_active_(handles|requests|resources)_total non-counter/.test(l));
      expect(problems).toEqual([]);
      expect([0, 3]).toContain(result.code);
      return;
    }
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
      expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfa]+$/);
    }
  });
});
