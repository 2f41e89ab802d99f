import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { HistorySampler } from '../../../src/metrics/history.sampler';
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

  it('reports the queue per app: length, lowest shard and its capacity, remaining capacity, the on-demand refill', () => {
    // Shard 0 got one step of 100 on demand; 6 IDs were taken from it.
    expect(sample(text, 'shardleaf_queue_length{app="3"}')).toBe(94);
    expect(sample(text, 'shardleaf_queue_refill_size{app="3"}')).toBe(100);
    // Every other shard's list is empty: the lowest fill is 0 of 100.
    expect(sample(text, 'shardleaf_queue_lowest_fill_ratio{app="3"}')).toBe(0);
    expect(sample(text, 'shardleaf_queue_refills_total{trigger="demand",outcome="refilled"}')).toBe(1);
    expect(sample(text, 'shardleaf_queue_refill_duration_seconds_count{trigger="demand"}')).toBe(1);
    // Every index up to the limit of max_limit_id, less the 6 handed out (the rest of shard 0's step is queued).
    let limit = 0n;
    let lowest = { shard: -1, left: 0n };
    for (let shard = 0; shard < 64; shard++) {
      const left = maxIndexFor(3, shard, 1638400000n) - (shard === 0 ? 6n : 0n);
      limit += maxIndexFor(3, shard, 1638400000n);
      if (lowest.shard < 0 || left < lowest.left) {
        lowest = { shard, left };
      }
    }
    expect(sample(text, 'shardleaf_queue_remaining_capacity{app="3"}')).toBe(Number(limit) - 6);
    expect(sample(text, 'shardleaf_queue_lowest_shard{app="3"}')).toBe(lowest.shard);
    expect(sample(text, 'shardleaf_queue_lowest_shard_capacity{app="3"}')).toBe(Number(lowest.left));
    // Per-app series only (METRICS_PER_SHARD off).
    expect(text).not.toMatch(/^shardleaf_queue_[a-z_]+\{app="3",shard=/m);
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

  it('passes promtool check metrics', async () => {
    await expectPromtoolClean(text);
  });
});

/** `promtool check metrics` finds nothing in the exposition (Debian's promtool 2.42; scripts/test.sh installs it). */
async function expectPromtoolClean(exposition: string): Promise<void> {
  expect(PROMTOOL).toBeDefined();
  const result = await promtoolCheck(exposition);
  expect(result.output.split('\n').filter((l) => l !== '')).toEqual([]);
  expect(result.code).toBe(0);
}

describe('Prometheus /metrics with METRICS_PER_SHARD=true', () => {
  const suite = appSuite('metricsshard');
  let text: string;

  beforeAll(async () => {
    const app = await suite.start({ METRICS_PER_SHARD: 'true', METRICS_STATE_TTL_MS: '0', METRICS_HISTORY_INTERVAL_MS: '0', CAPACITY_FORECAST_WINDOW_MS: '1200' });
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 4, appName: 'pershard', step: 100, maxLimitId: '1638400000' } })).status).toBe(201);
    const sampler = app.get(HistorySampler);
    await sampler.tick();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await request(app, 'GET', '/api/id/4?gatePass=alice&count=5', { token: null })).status).toBe(200);
    await sampler.tick();
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    text = res.body;
  });

  it('adds one series per app shard to the per-app ones', () => {
    expect(sample(text, 'shardleaf_queue_shard_length{app="4",shard="0"}')).toBe(95);
    expect(sample(text, 'shardleaf_queue_shard_length{app="4",shard="1"}')).toBe(0);
    expect(sample(text, 'shardleaf_queue_shard_refill_size{app="4",shard="1"}')).toBe(100);
    expect(sample(text, 'shardleaf_queue_shard_remaining_capacity{app="4",shard="1"}')).toBe(Number(maxIndexFor(4, 1, 1638400000n)));
    expect(sample(text, 'shardleaf_queue_shard_exhaustion_seconds{app="4",shard="0"}')).toBeGreaterThan(0);
    expect(text.split('\n').filter((l) => l.startsWith('shardleaf_queue_shard_length{'))).toHaveLength(64);
    expect(sample(text, 'shardleaf_queue_length{app="4"}')).toBe(95);
    expect(sample(text, 'shardleaf_queue_capacity_exhaustion_shard{app="4"}')).toBe(0);
  });

  it('passes promtool check metrics', async () => {
    await expectPromtoolClean(text);
  });
});
