import { MetricsLeader } from '../../../src/metrics/metrics-leader';
import { appSuite } from '../../support/app-suite';
import { request, startApp } from '../../support/test-env';

function sample(text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1));
}

/** Two instances on one database and key prefix: the shared-state gauges come from one of them. */
describe('/metrics of several instances: shared state from the lease holder only', () => {
  const suite = appSuite('metricslead');

  it('one instance exports the shared queue gauges, the other only its own; the other takes over when the first stops', async () => {
    const env = { METRICS_STATE_TTL_MS: '0', METRICS_PER_SHARD: 'true' };
    const first = await suite.start(env);
    expect((await request(first, 'POST', '/admin/apps', { body: { appId: 6, appName: 'lead', step: 100 } })).status).toBe(201);
    expect((await request(first, 'GET', '/api/id/6?gatePass=alice', { token: null })).status).toBe(200);
    const second = await startApp(suite.env.config(env));
    try {
      expect(second.get(MetricsLeader).isLeader()).toBe(false);
      // The second's start-up sweep filled the app's lists: what Redis holds now.
      const lengths: number[] = [];
      for (let shard = 0; shard < 64; shard++) {
        lengths.push(await suite.env.redis.llen(`${suite.env.keyPrefix}idList_6_${shard}`));
      }
      const queued = lengths.reduce((x, y) => x + y, 0);
      expect(queued).toBeGreaterThan(0);
      const a = (await request(first, 'GET', '/metrics', { token: null })).body;
      const b = (await request(second, 'GET', '/metrics', { token: null })).body;
      expect(sample(a, 'shardleaf_queue_length{app="6"}')).toBe(queued);
      expect(sample(a, 'shardleaf_queue_shard_length{app="6",shard="1"}')).toBe(lengths[1]);
      expect(a).toContain('shardleaf_queue_remaining_capacity{app="6"}');
      // The second instance: no shared state, but its own refill sizes, backends and counters.
      expect(b).not.toMatch(/^shardleaf_queue_(length|remaining_capacity|lowest_[a-z_]+|shard_length|shard_remaining_capacity)\{/m);
      expect(sample(b, 'shardleaf_queue_refill_size{app="6"}')).toBe(100);
      expect(sample(b, 'shardleaf_queue_shard_refill_size{app="6",shard="0"}')).toBe(100);
      expect(sample(b, 'shardleaf_backend_up{backend="redis"}')).toBe(1);

      // The leader stops and releases the lease: the next scrape of the second takes it.
      await first.close();
      const after = (await request(second, 'GET', '/metrics', { token: null })).body;
      expect(second.get(MetricsLeader).isLeader()).toBe(true);
      expect(sample(after, 'shardleaf_queue_length{app="6"}')).toBe(queued);
    } finally {
      await second.close();
    }
  });

  it('a list whose length cannot be read: shardleaf_backend_up{backend="redis"} 0, the other lists still counted', async () => {
    const app = await suite.start({ METRICS_STATE_TTL_MS: '0' });
    const key = `${suite.env.keyPrefix}idList_6_5`;
    const lengths: number[] = [];
    for (let shard = 0; shard < 64; shard++) {
      lengths.push(await suite.env.redis.llen(`${suite.env.keyPrefix}idList_6_${shard}`));
    }
    await suite.env.redis.del(key);
    await suite.env.redis.set(key, 'not a list');
    try {
      const text = (await request(app, 'GET', '/metrics', { token: null })).body;
      expect(sample(text, 'shardleaf_backend_up{backend="redis"}')).toBe(0);
      expect(sample(text, 'shardleaf_queue_length{app="6"}')).toBe(lengths.reduce((x, y) => x + y, 0) - lengths[5]);
    } finally {
      await suite.env.redis.del(key);
    }
    const text = (await request(app, 'GET', '/metrics', { token: null })).body;
    expect(sample(text, 'shardleaf_backend_up{backend="redis"}')).toBe(1);
  });
});
