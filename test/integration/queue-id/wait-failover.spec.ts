import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { FaultProxy } from '../../support/fault-proxy';
import { pollUntil } from '../../support/poll';
import { OwnRedisServer } from '../../support/redis-server';
import { TcpProxy } from '../../support/tcp-proxy';
import { shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { InjectResult, TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/**
 * Issue "Never twice", item 2: with REDIS_WAIT_REPLICAS the primary dies (here: its connection is
 * cut) with the WAIT of a pop in flight, and the "virtual IP" (a proxy) moves to the promoted
 * replica, which never saw the pop. A WAIT sent again there measures the promoted server's own
 * replication and would confirm a pop it never saw. The request must not return those IDs (200),
 * and no ID may be returned twice.
 *
 * Servers: primary P, replica R of P (its link through a proxy the test cuts, so R falls behind),
 * replica R2 of R (so that R, once promoted, has a replica that answers WAIT). The service talks
 * to P through a FaultProxy, which drops the WAIT's reply, cuts the connection and holds the
 * reconnect until the test has promoted R and points the proxy at it.
 */
const GATE_PASS = 'failover-user';

/** `redis` is a replica whose link to its primary is up. */
async function linkUp(redis: Redis): Promise<boolean> {
  return (await redis.info('replication')).includes('master_link_status:up');
}

/** `redis` has `n` replicas online. */
async function replicasOnline(redis: Redis, n: number): Promise<boolean> {
  const info = await redis.info('replication');
  return (info.match(/^slave\d+:.*state=online/gm) ?? []).length === n;
}

describe('REDIS_WAIT_REPLICAS when the WAIT reply is lost in a failover', () => {
  let env: TestEnv;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    env = await createTestEnv('waitfail');
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch(() => undefined);
    }
    await env?.cleanup();
  });

  async function setUp(appId: number): Promise<{
    app: NestFastifyApplication;
    proxy: FaultProxy;
    link: TcpProxy;
    replica: Redis;
    replicaPort: number;
  }> {
    // No 5 s wait before a full sync (Redis 7's default for diskless replication).
    const fast = ['--repl-diskless-sync-delay', '0'];
    const [primary, replica, subReplica] = await Promise.all([
      OwnRedisServer.start(fast),
      OwnRedisServer.start(fast),
      OwnRedisServer.start(fast),
    ]);
    cleanups.push(() => primary.destroy(), () => replica.destroy(), () => subReplica.destroy());
    const link = await TcpProxy.start(primary.port);
    const proxy = await FaultProxy.start(primary.port);
    cleanups.push(() => link.close(), () => proxy.close());
    const r = new Redis(replica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    const r2 = new Redis(subReplica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    cleanups.push(async () => r.disconnect(), async () => r2.disconnect());
    await r.replicaof('127.0.0.1', link.port);
    await r2.replicaof('127.0.0.1', replica.port);
    await pollUntil('R to sync with P', () => linkUp(r));
    await pollUntil('R2 to sync with R', () => linkUp(r2));

    const app = await startApp(
      env.config({
        REDIS_URL: `redis://127.0.0.1:${proxy.port}/0`,
        REDIS_WAIT_REPLICAS: '1',
        REDIS_WAIT_TIMEOUT_MS: '200',
      }),
    );
    cleanups.push(() => app.close());
    expect((await request(app, 'POST', '/admin/apps', { body: { appId, appName: `wait-${appId}`, step: 10 } })).status).toBe(201);
    // Index 1 is handed out by the on-demand refill, which queues 2..10 (confirmed by R's WAIT).
    expect((await request(app, 'GET', `/api/id/${appId}?gatePass=${GATE_PASS}`, { token: null })).status).toBe(200);
    const list = `${env.keyPrefix}idList_${appId}_${shardOf(GATE_PASS)}`;
    await pollUntil('R2 to hold the 9 queued indexes', async () => (await r2.llen(list)) === 9);
    return { app, proxy, link, replica: r, replicaPort: replica.port };
  }

  /**
   * Runs one request whose WAIT reply is lost while the primary "dies", fails over to R and then
   * asks again; returns both responses.
   */
  async function failover(appId: number, dropPipeline: boolean): Promise<InjectResult[]> {
    const { app, proxy, link, replica, replicaPort } = await setUp(appId);
    // R falls behind: nothing popped from now on reaches it.
    link.cut();
    const struck = proxy.strikeOnce((words) => words[0] === 'WAIT', { pauseAfterCut: true, dropPipeline });
    const firstP = request(app, 'GET', `/api/id/${appId}?gatePass=${GATE_PASS}&count=2`, { token: null });
    await struck;
    // The failover: R promoted (R2 stays its replica), the "virtual IP" moved to it.
    await replica.replicaof('NO', 'ONE');
    await pollUntil('R2 online as the replica of the promoted R', () => replicasOnline(replica, 1));
    proxy.restore(replicaPort);
    const first = await firstP;
    const second = await request(app, 'GET', `/api/id/${appId}?gatePass=${GATE_PASS}&count=2`, { token: null });
    return [first, second];
  }

  /** No ID in two 200 responses. */
  function expectNoIdTwice(responses: InjectResult[]): void {
    const ids = responses.filter((r) => r.status === 200).flatMap((r) => r.json<{ ids: string[] }>().ids);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  }

  it('the pop and its WAIT both unanswered: no 200 for the pop, no ID twice after the failover', async () => {
    const [first, second] = await failover(51, true);
    expect(`${first.status} ${first.body}`).not.toMatch(/^200/);
    expect(`${second.status} ${second.body}`).toMatch(/^200/);
    expectNoIdTwice([first, second]);
  });

  it('the pop answered, its WAIT lost: QUEUE_NOT_REPLICATED, no ID twice after the failover', async () => {
    const [first, second] = await failover(52, false);
    expectError(first, 503, -6);
    expect(second.status).toBe(200);
    expectNoIdTwice([first, second]);
  });
});
