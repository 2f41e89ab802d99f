import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { JS_SAFE_LAYOUT, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { pollUntil } from '../../support/poll';
import { Readiness, readinessUntil } from '../../support/readiness';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { QUIET_ENV, getIds, startRefusal, uniqueName, workerIdOf } from './snowflake-harness';

type GeneratorsDetail = { status: string; snowflake?: boolean | null; snowflakeReason?: string };

/** SNOWFLAKE_MODE=redis against the shared Redis: worker ids leased with a TTL, no identity setting. */
describe('snowflake redis mode (worker ids leased from Redis)', () => {
  let env: TestEnv;
  const apps: NestFastifyApplication[] = [];

  beforeAll(async () => {
    env = await createTestEnv('sf_redis');
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await env.cleanup();
  });

  /** Every instance the same SNOWFLAKE_PORT: redis mode needs no identity of its own. */
  function config(name: string, extra: Record<string, string> = {}) {
    return env.config({
      ...QUIET_ENV,
      SNOWFLAKE_MODE: 'redis',
      SNOWFLAKE_NAME: name,
      SNOWFLAKE_IP: '127.0.0.1',
      SNOWFLAKE_PORT: '7777',
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      // A short TTL: the first start on a name finds no leases and waits one TTL.
      SNOWFLAKE_LEASE_TTL_MS: '1500',
      SNOWFLAKE_REPORT_INTERVAL_MS: '300',
      ...extra,
    });
  }
  async function start(name: string, extra: Record<string, string> = {}): Promise<NestFastifyApplication> {
    const app = await startApp(config(name, extra));
    apps.push(app);
    return app;
  }
  async function stop(app: NestFastifyApplication): Promise<void> {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  }
  const leases = (name: string) => `${env.keyPrefix}snowflake:${name}:leases`;

  it('two instances get distinct worker ids and 10,000 IDs from them are all distinct', async () => {
    const name = uniqueName('two');
    const [a, b] = [await start(name), await start(name)];
    const workerIds = [await workerIdOf(a, DEFAULT_TWEPOCH), await workerIdOf(b, DEFAULT_TWEPOCH)];
    expect(new Set(workerIds).size).toBe(2);
    const all: bigint[] = [];
    for (let round = 0; round < 5; round++) {
      for (const batch of await Promise.all([getIds(a, 1000), getIds(b, 1000)])) {
        all.push(...batch);
      }
    }
    expect(all).toHaveLength(10_000);
    expect(new Set(all.map(String)).size).toBe(10_000);
    expect(new Set(all.map((id) => decodeId(id, DEFAULT_TWEPOCH).workerId))).toEqual(new Set(workerIds));
    const hash = await env.redis.hgetall(leases(name));
    for (const id of workerIds) {
      expect(hash[`a:${id}`]).toBe('127.0.0.1:7777');
      expect(Number(hash[`t:${id}`])).toBeGreaterThan(Date.now());
    }
    await Promise.all([stop(a), stop(b)]);
  });

  it('releases the lease on a graceful stop, recording the last ID’s time, so the next holder starts at once', async () => {
    const name = uniqueName('release');
    const a = await start(name);
    const ids = await getIds(a, 10);
    const workerId = decodeId(ids[0], DEFAULT_TWEPOCH).workerId;
    await stop(a);
    const hash = await env.redis.hgetall(leases(name));
    expect(hash[`o:${workerId}`]).toBeUndefined();
    const recorded = Number(hash[`t:${workerId}`]);
    expect(recorded).toBeGreaterThanOrEqual(decodeId(ids[9], DEFAULT_TWEPOCH).timestamp);
    expect(recorded).toBeLessThanOrEqual(Date.now());
    const b = await start(name);
    const next = await getIds(b, 10);
    expect(decodeId(next[0], DEFAULT_TWEPOCH)).toMatchObject({ workerId });
    expect(decodeId(next[0], DEFAULT_TWEPOCH).timestamp).toBeGreaterThan(recorded);
    await stop(b);
  });

  it('not ready and no IDs while no lease is held (its id taken, none free); serves again with a fresh id', async () => {
    const name = uniqueName('lost');
    const key = leases(name);
    // js-safe: 32 worker ids, easy to fill.
    const a = await start(name, { SNOWFLAKE_LAYOUT: 'js-safe', SNOWFLAKE_LEASE_TTL_MS: '1500', SNOWFLAKE_REPORT_INTERVAL_MS: '200' });
    const held = decodeId((await getIds(a, 1))[0], DEFAULT_TWEPOCH, JS_SAFE_LAYOUT).workerId;
    expect((await readinessUntil(a, 200)).info?.generators).toMatchObject({ snowflake: true });
    // Every other id leased by someone alive, then the held one claimed by another holder.
    const far = String(Date.now() + 3_600_000);
    for (let id = 0; id <= 31; id++) {
      await env.redis.hset(key, `o:${id}`, `other-${id}`, `e:${id}`, far);
    }
    await pollUntil('IDs to be refused', async () => (await request(a, 'GET', '/api/snowflake/get/x')).status === 503);
    const refused = await request(a, 'GET', '/api/snowflake/get/x');
    expect(refused.json()).toMatchObject({ code: -213, error: 'SNOWFLAKE_LEASE_LOST' });
    const res = await request(a, 'GET', '/health/ready', { token: null });
    expect(res.status).toBe(503);
    const generators = res.json<Readiness>().error?.generators as GeneratorsDetail;
    expect(generators).toMatchObject({ status: 'down', snowflake: false });
    expect(generators.snowflakeReason).toMatch(/claimed by another instance/);
    // One id is freed: the instance takes it and serves again.
    const freed = held === 9 ? 10 : 9;
    await env.redis.hdel(key, `o:${freed}`, `e:${freed}`);
    await readinessUntil(a, 200);
    const after = await getIds(a, 100);
    expect(after.every((id) => decodeId(id, DEFAULT_TWEPOCH, JS_SAFE_LAYOUT).workerId === freed)).toBe(true);
    await stop(a);
  });

  it('after Redis lost the leases (the hash deleted), no id is leased again before the old holders stopped: all IDs distinct', async () => {
    const name = uniqueName('lost-hash');
    const a = await start(name);
    const before = await getIds(a, 1000);
    await env.redis.del(leases(name));
    const b = await start(name);
    const all = [...before, ...(await getIds(b, 1000))];
    await pollUntil('the first instance to serve again', async () => (await request(a, 'GET', '/api/snowflake/get/x')).status === 200);
    for (let round = 0; round < 4; round++) {
      for (const batch of await Promise.all([getIds(a, 1000), getIds(b, 1000)])) {
        all.push(...batch);
      }
    }
    expect(new Set(all.map(String)).size).toBe(all.length);
    const hash = await env.redis.hgetall(leases(name));
    expect(Object.keys(hash).filter((f) => f.startsWith('o:'))).toHaveLength(2);
    await Promise.all([stop(a), stop(b)]);
  });

  it('refuses to start when every worker id is leased', async () => {
    const name = uniqueName('full');
    const far = String(Date.now() + 3_600_000);
    for (let id = 0; id <= 31; id++) {
      await env.redis.hset(leases(name), `o:${id}`, 'other', `e:${id}`, far);
    }
    expect(await startRefusal(config(name, { SNOWFLAKE_LAYOUT: 'js-safe' }))).toMatch(/every worker id 0..31 is leased by a live instance/);
  });

  it('shows the id held and the renewals in /metrics', async () => {
    const name = uniqueName('metrics');
    const a = await start(name, { SNOWFLAKE_LEASE_TTL_MS: '1000', SNOWFLAKE_REPORT_INTERVAL_MS: '100' });
    const workerId = await workerIdOf(a, DEFAULT_TWEPOCH);
    const text = await pollUntil('two renewals in /metrics', async () => {
      const body = (await request(a, 'GET', '/metrics', { token: null })).body;
      const m = /shardleaf_snowflake_lease_renewals_total\{outcome="renewed"\} (\d+)/.exec(body);
      return m !== null && Number(m[1]) >= 2 && body;
    });
    expect(text).toContain(`shardleaf_snowflake_worker_id{mode="redis"} ${workerId}`);
    expect(text).toContain('shardleaf_snowflake_serving{mode="redis"} 1');
    // The time recorded with the last renewal (now + TTL), below which IDs are issued.
    const status = (await request(a, 'GET', '/admin/snowflake')).json<{ workerId: number; recordedUntil: string }>();
    expect(status.workerId).toBe(workerId);
    expect(Date.parse(status.recordedUntil)).toBeGreaterThan(Date.now());
    await stop(a);
  });
});
