import Redis from 'ioredis';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { OwnRedisServer } from '../../support/redis-server';
import { TcpProxy } from '../../support/tcp-proxy';
import { request } from '../../support/test-env';
import { QUIET_ENV, getIds, uniqueName } from './snowflake-harness';

/**
 * SNOWFLAKE_MODE=redis with REDIS_WAIT_REPLICAS: a claim or renewal counts (moves the lease's
 * deadline and the recorded time up to which IDs are issued) only once the replicas confirmed it,
 * so a replica promoted later holds every lease an instance issues under. Our own primary and
 * replica; the replica's link runs through a proxy the test cuts.
 */
describe('snowflake redis mode with REDIS_WAIT_REPLICAS', () => {
  const suite = appSuite('sf_redis_wait');
  let primary: OwnRedisServer;
  let replicaServer: OwnRedisServer;
  let link: TcpProxy;
  let replica: Redis;

  beforeAll(async () => {
    const fast = ['--repl-diskless-sync-delay', '0'];
    [primary, replicaServer] = await Promise.all([OwnRedisServer.start(fast), OwnRedisServer.start(fast)]);
    link = await TcpProxy.start(primary.port);
    replica = new Redis(replicaServer.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    await replica.replicaof('127.0.0.1', link.port);
    await pollUntil('the replica to sync', async () => (await replica.info('replication')).includes('master_link_status:up'));
  });

  afterAll(async () => {
    replica?.disconnect();
    await link?.close();
    await Promise.all([primary?.destroy(), replicaServer?.destroy()]);
  });

  it('serves while the replica confirms; stops once renewals go unconfirmed past the deadline; serves again when confirmed', async () => {
    const name = uniqueName('wait');
    const app = await suite.start({
      ...QUIET_ENV,
      REDIS_URL: primary.url,
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '200',
      SNOWFLAKE_MODE: 'redis',
      SNOWFLAKE_NAME: name,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      SNOWFLAKE_LEASE_TTL_MS: '2000',
      SNOWFLAKE_REPORT_INTERVAL_MS: '200',
    });
    expect(await getIds(app, 100)).toHaveLength(100);
    // The replica holds the lease the instance issues under.
    const key = `${suite.env.keyPrefix}snowflake:${name}:leases`;
    await pollUntil('the lease on the replica', async () => (await replica.hget(key, 'o:0')) !== null);
    link.cut();
    const refused = await pollUntil('IDs to be refused', async () => {
      const res = await request(app, 'GET', '/api/snowflake/get/w');
      return res.status === 503 && res.json<{ code: number; message: string }>();
    }, { timeoutMs: 15_000, intervalMs: 100 });
    expect(refused).toMatchObject({ code: -213 });
    expect(refused.message).toMatch(/could not be renewed in time/);
    const metrics = (await request(app, 'GET', '/metrics', { token: null })).body;
    expect(metrics).toMatch(/shardleaf_snowflake_lease_renewals_total\{outcome="failed"\} [1-9]/);
    link.restore();
    await pollUntil('IDs again', async () => (await request(app, 'GET', '/api/snowflake/get/w')).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    expect(await getIds(app, 100)).toHaveLength(100);
  }, 60_000);
});
