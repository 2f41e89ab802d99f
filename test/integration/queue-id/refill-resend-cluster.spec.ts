import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { ShardRefill } from '../../../src/queue-id/refill/shard-refill';
import { CLAIM_LUA } from '../../../src/queue-id/redis/segment-push';
import { FaultProxy } from '../../support/fault-proxy';
import { pollUntil } from '../../support/poll';
import { OwnRedisCluster } from '../../support/redis-server';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/**
 * Issue "Never twice", item 1 on a Redis Cluster: ioredis's Cluster client retries a command that
 * failed with "Connection is closed." on another node connection, although the lost one may have
 * run it. One master announces a FaultProxy's port (cluster-announce-port), so the service's
 * connection to it runs through the proxy, which drops the reply of a refill push and cuts.
 */
describe('refill push whose reply is lost, on a Redis Cluster', () => {
  let env: TestEnv;
  let cluster: OwnRedisCluster;
  let proxy: FaultProxy;
  let master: Redis;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('resendcl');
    cluster = await OwnRedisCluster.start(3);
    const node = cluster.servers[0];
    proxy = await FaultProxy.start(node.port);
    master = new Redis(node.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    // The master knows the claim script, so a struck claim is one that ran (not a NOSCRIPT reply).
    await master.script('LOAD', CLAIM_LUA);
    await master.config('SET', 'cluster-announce-bus-port', String(node.port + 10000));
    await master.config('SET', 'cluster-announce-port', String(proxy.port));
    // Every master tells the proxy's port for the proxied master's slots.
    for (const other of cluster.servers) {
      const client = new Redis(other.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        await pollUntil('cluster-announce-port to spread', async () =>
          JSON.stringify(await client.cluster('SLOTS')).includes(String(proxy.port)),
        );
      } finally {
        client.disconnect();
      }
    }
    app = await startApp(env.config({ REDIS_CLUSTER_NODES: `127.0.0.1:${proxy.port}` }));
  });

  afterAll(async () => {
    await app?.close();
    master?.disconnect();
    await proxy?.close();
    await cluster?.destroy();
    await env?.cleanup();
  });

  it.each([
    ['claim', 43],
    ['EXEC', 44],
  ])('the %s of a push answered by no reply is not sent again: each queued index once', async (struckCommand, appId) => {
    expect((await request(app, 'POST', '/admin/apps', { body: { appId, appName: `resend-cl${appId}`, step: 100 } })).status).toBe(
      201,
    );
    // A shard whose list lives on the proxied master.
    let shard = 0;
    while (!(await ownsSlot(shard))) {
      shard++;
    }
    const list = `${env.keyPrefix}idList_${appId}_${shard}`;
    // The push's two steps (segment-push.ts): the claim (a script whose first key is the list), the
    // transaction of the RPUSH and its limit guard (run by its EXEC; only this refill is under way).
    const struck = proxy.strikeOnce((w) =>
      struckCommand === 'EXEC' ? w[0] === 'EXEC' : ['EVAL', 'EVALSHA'].includes(w[0]) && w[3] === list,
    );
    const refill = app.get(ShardRefill);
    await refill.refill({ appId: appId, shardId: shard }, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 }).catch(() => undefined);
    await struck;
    // Anything retried has run once the next command for that node has its reply.
    await refill.refill({ appId: appId, shardId: shard }, { skipIfAtLeast: 1000, minWanted: 1, lockRetries: 0 }).catch(() => undefined);
    const queued = await master.lrange(list, 0, -1);
    expect(queued.length).toBeGreaterThan(0);
    expect(queued.length - new Set(queued).size).toBe(0);
    expect(await master.get(`{${list}}:pushed`)).toBe('200');
    // A lost claim reply: 1..100 is a gap; a lost EXEC reply: the RPUSH ran once. The second refill pushed 101..200.
    expect(queued.map(Number)).toEqual(
      Array.from({ length: struckCommand === 'EXEC' ? 200 : 100 }, (_, i) => i + (struckCommand === 'EXEC' ? 1 : 101)),
    );
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shard])) as Array<{
      max_id: string;
    }>;
    expect(queued.length).toBeLessThanOrEqual(Number(rows[0].max_id));

    async function ownsSlot(s: number): Promise<boolean> {
      try {
        await master.exists(`${env.keyPrefix}idList_${appId}_${s}`);
        return true;
      } catch {
        return false; // MOVED: another master's slot
      }
    }
  });
});
