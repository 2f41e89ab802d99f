import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { HistorySampler } from '../../../src/metrics/history.sampler';
import { DashboardHistory } from '../../../src/dashboard/dashboard-history.controller';
import { appSuite } from '../../support/app-suite';
import { request, startApp } from '../../support/test-env';

/** The value of one sample, e.g. `shardleaf_backend_up{backend="mysql"}`. */
function sample(text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The dashboard's history (GET /admin/dashboard/history) and /metrics while MySQL fails. */
describe('history sampler, dashboard history and a MySQL outage', () => {
  const suite = appSuite('history');
  let app: NestFastifyApplication;
  let sampler: HistorySampler;

  beforeAll(async () => {
    app = await suite.start({ METRICS_HISTORY_INTERVAL_MS: '0', METRICS_STATE_TTL_MS: '0', CAPACITY_FORECAST_WINDOW_MS: '1200' });
    sampler = app.get(HistorySampler);
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 9, appName: 'history', step: 50, maxLimitId: '1638400000' } })).status).toBe(201);
  });

  it('needs the admin token', async () => {
    expect((await request(app, 'GET', '/admin/dashboard/history', { token: null })).status).toBe(401);
  });

  it('keeps no points with METRICS_HISTORY_INTERVAL_MS=0 (history off)', async () => {
    await sampler.tick();
    await sleep(150);
    expect((await request(app, 'GET', '/api/id/9?gatePass=alice&count=7', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/snowflake/get/x?count=4', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/api/id/9?gatePass=', { token: null })).status).toBe(400);
    await sampler.tick();
    const history = (await request(app, 'GET', '/admin/dashboard/history')).json<DashboardHistory>();
    expect(history.intervalMs).toBe(0);
    expect(history.spanMs).toBe(15 * 60_000);
    expect(history.points).toHaveLength(0);
  });

  it('turns counter totals into points: IDs per second by generator, errors, queue depth per app, and a forecast', async () => {
    // A second instance whose timer is on but far apart (60 s): the test ticks it by hand.
    const app2 = await startApp(suite.env.config({ METRICS_HISTORY_INTERVAL_MS: '60000', METRICS_STATE_TTL_MS: '0', CAPACITY_FORECAST_WINDOW_MS: '1200' }));
    try {
      const s2 = app2.get(HistorySampler);
      await s2.tick();
      await sleep(150);
      // The same lists as the first app (same database and prefix): shard 0 of app 9.
      expect((await request(app2, 'GET', '/api/id/9?gatePass=alice&count=7', { token: null })).status).toBe(200);
      expect((await request(app2, 'GET', '/api/snowflake/get/x?count=4', { token: null })).status).toBe(200);
      expect((await request(app2, 'GET', '/api/id/9?gatePass=', { token: null })).status).toBe(400);
      await s2.tick();
      const history = (await request(app2, 'GET', '/admin/dashboard/history')).json<DashboardHistory>();
      expect(history.intervalMs).toBe(60_000);
      const last = history.points[history.points.length - 1];
      expect(last.idsPerSecond.queue).toBeGreaterThan(0);
      expect(last.idsPerSecond.snowflake).toBeGreaterThan(0);
      expect(last.idsPerSecond.segment).toBe(0);
      expect(last.clientErrorsPerMinute).toBeGreaterThan(0);
      expect(last.serverErrorsPerMinute).toBe(0);
      // The depth of app 9 is what Redis holds in its 64 lists.
      let depth = 0;
      for (let shard = 0; shard < 64; shard++) {
        depth += await suite.env.redis.llen(`${suite.env.keyPrefix}idList_9_${shard}`);
      }
      expect(last.queueDepth?.['9']).toBe(depth);
      expect(depth).toBeGreaterThan(0);
      // The forecast of app 9: its IDs went at a measured rate, so it runs out some day.
      const f = history.forecast.find((x) => x.appId === 9);
      expect(f?.idsPerSecond).toBeGreaterThan(0);
      expect(f?.secondsLeft).toBeGreaterThan(0);
      expect(f?.firstShard).toBe(0);
    } finally {
      await app2.close();
    }
  });

  it('while MySQL fails: /metrics still answers with the counters, shardleaf_backend_up{backend="mysql"} 0, the forecast kept', async () => {
    await sampler.tick();
    await sleep(150);
    expect((await request(app, 'GET', '/api/id/9?gatePass=alice&count=3', { token: null })).status).toBe(200);
    await sampler.tick();
    const before = sampler.view().forecast.find((f) => f.app === 9);
    expect(before?.idsPerSecond).toBeGreaterThan(0);
    await suite.env.sql('RENAME TABLE id_alloc TO id_alloc_away');
    try {
      const res = await request(app, 'GET', '/metrics', { token: null });
      expect(res.status).toBe(200);
      expect(sample(res.body, 'shardleaf_backend_up{backend="mysql"}')).toBe(0);
      expect(sample(res.body, 'shardleaf_backend_up{backend="redis"}')).toBe(1);
      expect(sample(res.body, 'shardleaf_ids_issued_total{generator="queue"}')).toBeGreaterThan(0);
      expect(res.body).not.toContain('shardleaf_queue_remaining_capacity{');
      await sampler.tick();
      // The failed read did not reset the forecast's history.
      expect(sampler.view().forecast.find((f) => f.app === 9)).toEqual(before);
    } finally {
      await suite.env.sql('RENAME TABLE id_alloc_away TO id_alloc');
    }
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(sample(res.body, 'shardleaf_backend_up{backend="mysql"}')).toBe(1);
    expect(sample(res.body, 'shardleaf_queue_remaining_capacity{app="9"}')).toBeGreaterThan(0);
  });
});
