import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import { shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { AppRegistrySync } from '../../../src/queue-id/app-registry-sync.service';
import { BackgroundRefills } from '../../../src/queue-id/refill/background-refills';
import { RefillMonitor } from '../../../src/queue-id/refill-monitor';
import { startService } from '../../../src/start-service';
import { OwnRedisCluster } from '../../support/redis-server';
import { appSuite } from '../../support/app-suite';
import { freePort } from '../../support/free-port';
import { captureLog } from '../../support/log-capture';
import { request, startApp } from '../../support/test-env';

describe('queue IDs through a 3-master Redis Cluster', () => {
  const suite = appSuite('rcluster');
  let cluster: OwnRedisCluster;
  let app: NestFastifyApplication;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await OwnRedisCluster.start(3);
    suite.defer(() => cluster.destroy());
    app = await suite.start({ REDIS_CLUSTER_NODES: cluster.nodes });
    client = new Cluster(cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
    suite.defer(() => client.disconnect());
  });

  it('refuses the start in one line naming REDIS_CLUSTER_NODES when no node answers', async () => {
    const nodes = `127.0.0.1:${await freePort()},127.0.0.1:${await freePort()}`;
    const { lines, stream } = captureLog();
    await expect(startService(suite.env.config({ LOG_LEVEL: 'log', REDIS_CLUSTER_NODES: nodes }), { logDestination: stream })).rejects.toThrow();
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      `error Redis Cluster at REDIS_CLUSTER_NODES (${nodes}) has no cluster node that answers: not starting (start it, or correct the variable)`,
    ]);
  });

  it('starts the service on the Cluster: the start check passes, and the start line names the Cluster', async () => {
    const { lines, stream } = captureLog();
    const started = await startService(suite.env.config({ LOG_LEVEL: 'log', REDIS_CLUSTER_NODES: cluster.nodes }), { logDestination: stream });
    suite.defer(() => started.close());
    expect(lines.filter((l) => l.msg.startsWith('listening on')).map((l) => l.msg)).toEqual([
      expect.stringContaining(`Redis cluster ${cluster.nodes};`),
    ]);
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

  it('cleans up the lists of deleted apps on every master (one slot per script), never unknown ones', async () => {
    // App 77: deleted through the admin API, but its Redis step never ran (tombstones, no rows).
    const retired = Array.from({ length: 30 }, (_, shard) => shard);
    await suite.env.sql(
      `INSERT INTO id_alloc_retired (app_id, shard_id, max_id) VALUES ${retired.map((s) => `(77, ${s}, ${1000 + s})`).join(', ')}`,
    );
    const lists77 = retired.map((shard) => `${suite.env.keyPrefix}idList_77_${shard}`);
    // App 78: unknown to this database (another deployment's, same prefix): must survive.
    const lists78 = retired.map((shard) => `${suite.env.keyPrefix}idList_78_${shard}`);
    await Promise.all([...lists77, ...lists78].map((key) => client.rpush(key, '1')));
    const deleted = await app.get(AppRegistrySync).cleanUpRetiredLists();
    expect(deleted).toBe(30);
    expect(await Promise.all(lists77.map((key) => client.exists(key)))).toEqual(lists77.map(() => 0));
    expect(await Promise.all(lists78.map((key) => client.exists(key)))).toEqual(lists78.map(() => 1));
    const marks = await Promise.all(retired.map((shard) => client.get(`{${suite.env.keyPrefix}idList_77_${shard}}:pushed`)));
    expect(marks).toEqual(retired.map((shard) => String(1000 + shard)));
    // Lists of the live app stay.
    expect(await client.llen(`${suite.env.keyPrefix}idList_5_0`)).toBeGreaterThan(0);
  });

  it('deletes an app through the admin API: lists gone and markers raised on every master', async () => {
    const res = await request(app, 'DELETE', '/admin/apps/5');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ deletedRows: 64, deletedLists: 64 });
    const rows = (await suite.env.sql('SELECT shard_id, max_id FROM id_alloc_retired WHERE app_id = 5 ORDER BY shard_id')) as Array<{
      shard_id: number;
      max_id: string;
    }>;
    expect(rows).toHaveLength(64);
    for (const row of rows) {
      expect(await client.exists(`${suite.env.keyPrefix}idList_5_${row.shard_id}`)).toBe(0);
      expect(await client.get(`{${suite.env.keyPrefix}idList_5_${row.shard_id}}:pushed`)).toBe(row.max_id);
    }
    const again = await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'cluster', step: 2000 } });
    expect(again.status).toBe(201);
    expect(again.json()).toMatchObject({ resumedShards: 64 });
  });

  it('refills ahead through the Cluster: the pops and length reads routed by their key, no ID twice', async () => {
    const ahead = await startApp(
      suite.env.config({ REDIS_CLUSTER_NODES: cluster.nodes, QUEUE_REFILL_AHEAD: 'true', QUEUE_REFILL_MAX_SIZE: '100000' }),
    );
    try {
      expect((await request(ahead, 'POST', '/admin/apps', { body: { appId: 6, appName: 'ahead', step: 100 } })).status).toBe(201);
      const counts = { demand: 0, ahead: 0 };
      ahead.get(RefillMonitor).subscribe((trigger, outcome) => {
        if (outcome === 'refilled' && (trigger === 'demand' || trigger === 'ahead')) {
          counts[trigger]++;
        }
      });
      const background = ahead.get(BackgroundRefills);
      const seen = new Set<string>();
      for (let i = 0; i < 2000; i++) {
        const res = await request(ahead, 'GET', `/api/id/6?gatePass=user-${i % 8}`, { token: null });
        expect(res.status).toBe(200);
        seen.add(res.body);
        await background.settled();
      }
      expect(seen.size).toBe(2000);
      expect(counts.ahead).toBeGreaterThan(0);
      // One demand refill per shard used (its empty list), none after.
      expect(counts.demand).toBe(new Set(Array.from({ length: 8 }, (_, i) => shardOf(`user-${i}`))).size);
    } finally {
      await ahead.close();
    }
  });
});
