import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import { QueueConfigService } from '../../../src/queue-id/queue-config.service';
import { OwnRedisCluster } from '../../support/redis-server';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

describe('queue IDs through a 3-master Redis Cluster', () => {
  let env: TestEnv;
  let cluster: OwnRedisCluster;
  let app: NestFastifyApplication;
  let client: Cluster;

  beforeAll(async () => {
    env = await createTestEnv('rcluster');
    cluster = await OwnRedisCluster.start(3);
    app = await startApp(env.config({ REDIS_CLUSTER_NODES: cluster.nodes }));
    client = new Cluster(cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
  });

  afterAll(async () => {
    client?.disconnect();
    await app?.close();
    await cluster?.destroy();
    await env?.cleanup();
  });

  it('is ready and hands out 100,000 unique IDs from lists spread over every master', async () => {
    expect((await request(app, 'GET', '/health/ready', { token: null })).status).toBe(200);
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'cluster', step: 2000 } })).status).toBe(201);
    const refill = await request(app, 'POST', '/admin/apps/5/refill');
    expect(refill.json()).toMatchObject({ refilled: 64 });

    const seen = new Set<string>();
    const gatePasses = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    for (let round = 0; round < 5; round++) {
      const batch = await Promise.all(
        gatePasses.map((g) => request(app, 'GET', `/api/id/5?gatePass=${g}&count=1000`, { token: null })),
      );
      for (const res of batch) {
        expect(res.status).toBe(200);
        for (const id of res.json<{ ids: string[] }>().ids) {
          seen.add(id);
        }
      }
    }
    expect(seen.size).toBe(100_000);

    // The lists really are on several masters (no hash tags: one slot per list).
    const perMaster = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    expect(perMaster.filter((n) => n > 0).length).toBe(3);

    const detail = await request(app, 'GET', '/admin/apps/5');
    expect(detail.status).toBe(200);
    expect(detail.json<{ queueLength: number }>().queueLength).toBeGreaterThan(0);
  });

  it('deletes orphan lists on every master (SCAN per master, DEL per key)', async () => {
    const orphans = Array.from({ length: 30 }, (_, shard) => `${env.keyPrefix}idList_77_${shard}`);
    await Promise.all(orphans.map((key) => client.rpush(key, '1')));
    const deleted = await app.get(QueueConfigService).deleteOrphanLists();
    expect(deleted).toBe(30);
    expect(await Promise.all(orphans.map((key) => client.exists(key)))).toEqual(orphans.map(() => 0));
    // Lists of the live app stay.
    expect(await client.llen(`${env.keyPrefix}idList_5_0`)).toBeGreaterThan(0);
  });
});
