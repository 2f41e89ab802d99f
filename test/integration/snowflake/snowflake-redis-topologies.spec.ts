import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { OwnRedisCluster, OwnRedisSentinel, OwnRedisServer } from '../../support/redis-server';
import { appSuite } from '../../support/app-suite';
import { QUIET_ENV, getIds, uniqueName } from './snowflake-harness';

/** The leases live in one hash (one slot): redis mode works on a Cluster and through Sentinel too. */
describe('snowflake redis mode on a Redis Cluster and through Sentinel', () => {
  const suite = appSuite('sf_redis_topo');
  const redisMode = (extra: Record<string, string>) => ({
    ...QUIET_ENV,
    SNOWFLAKE_MODE: 'redis',
    SNOWFLAKE_NAME: uniqueName('topo'),
    SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    // Renewal and loss are tested elsewhere: here a lease outlives an event-loop stall of a few
    // seconds (a loaded CI machine), which a 2 s lease did not.
    SNOWFLAKE_LEASE_TTL_MS: '8000',
    SNOWFLAKE_REPORT_INTERVAL_MS: '500',
    ...extra,
  });

  async function twoInstances(env: Record<string, string>): Promise<NestFastifyApplication[]> {
    return [await suite.start(env), await suite.start(env)];
  }

  async function expectDistinct(apps: NestFastifyApplication[]): Promise<void> {
    const all: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      for (const batch of await Promise.all(apps.map((app) => getIds(app, 1000)))) {
        all.push(...batch);
      }
    }
    expect(new Set(all.map(String)).size).toBe(all.length);
    expect(new Set(all.map((id) => decodeId(id, DEFAULT_TWEPOCH).workerId)).size).toBe(apps.length);
  }

  it('Cluster: two instances lease distinct ids from the hash on its master', async () => {
    const cluster = await OwnRedisCluster.start(3);
    suite.defer(() => cluster.destroy());
    const env = redisMode({ REDIS_CLUSTER_NODES: cluster.nodes });
    await expectDistinct(await twoInstances(env));
    const client = new Cluster(cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
    try {
      const hash = await client.hgetall(`${suite.env.keyPrefix}snowflake:${env.SNOWFLAKE_NAME}:leases`);
      expect(Object.keys(hash).filter((f) => f.startsWith('o:'))).toHaveLength(2);
    } finally {
      client.disconnect();
    }
  });

  it('Sentinel: two instances lease distinct ids from the master it names', async () => {
    const master = await OwnRedisServer.start();
    suite.defer(() => master.destroy());
    const sentinel = await OwnRedisSentinel.start(master, 'sf-topo');
    suite.defer(() => sentinel.destroy());
    await expectDistinct(await twoInstances(redisMode({ REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: 'sf-topo' })));
  });
});
