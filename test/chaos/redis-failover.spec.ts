import { MariaDbProcess, RedisProcess } from './support/backends';
import { ManagedProcess } from './support/managed-process';
import { CHAOS_SCALE, ScenarioResult, runScenario, sleep, summary } from './support/scenario';
import { ServiceProcess, ensureBuilt } from './support/service-process';
import { pollUntil } from '../support/poll';
import { TcpProxy } from '../support/tcp-proxy';

/**
 * Redis failover with asynchronous replication: a primary + replica pair behind a proxy (the
 * "virtual IP"); under load the replica falls behind (its replication link is cut), the primary dies, the replica is promoted
 * (REPLICAOF NO ONE) and the proxy switched to it. Pops the replica never saw come back out of
 * it: duplicates, unless REDIS_WAIT_REPLICAS makes every pop wait for the replica first.
 */
const ADMIN = 'chaos-admin-token';
const IDS = Math.round(150_000 * CHAOS_SCALE);

/** Makes `replica` replicate from `port` (the primary, or a proxy in front of it) and waits for the sync. */
async function replicaOf(replica: RedisProcess, port: number): Promise<void> {
  await replica.command(['REPLICAOF', '127.0.0.1', String(port)]);
  await pollUntil(
    `replica ${replica.port} to sync with ${port}`,
    async () => String(await replica.command(['INFO', 'replication'])).includes('master_link_status:up'),
    { intervalMs: 100 },
  );
}

describe('Redis failover (REDIS_WAIT_REPLICAS)', () => {
  let db: MariaDbProcess;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    ensureBuilt();
    db = await MariaDbProcess.create();
    await db.query('CREATE DATABASE shardleaf_failover');
  }, 120_000);

  afterAll(async () => {
    await ManagedProcess.killAll();
    for (const cleanup of cleanups) {
      await cleanup();
    }
    await db?.destroy();
  }, 60_000);

  async function failover(appId: number, waitReplicas: number): Promise<ScenarioResult> {
    const primary = await RedisProcess.create();
    const replica = await RedisProcess.create();
    const proxy = await TcpProxy.start(primary.port);
    // The replication link runs through a proxy too, so the test can make the replica fall behind.
    const link = await TcpProxy.start(primary.port);
    cleanups.push(() => primary.destroy(), () => replica.destroy(), () => proxy.close(), () => link.close());
    await replicaOf(replica, link.port);
    const env = {
      DATABASE_URL: db.url('shardleaf_failover'),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}/0`,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'error',
      SNOWFLAKE_MODE: 'off',
      SEGMENT_SYNC_CRON: 'off',
      QUEUE_REFILL_CRON: 'off',
      REDIS_WAIT_REPLICAS: String(waitReplicas),
      REDIS_WAIT_TIMEOUT_MS: '100',
    };
    const services = await Promise.all(['f1', 'f2'].map((name) => ServiceProcess.create(`${name}-wait${waitReplicas}`, env)));
    await services[0].start();
    await services[1].start();
    const res = await fetch(`${services[0].baseUrl}/admin/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appId, appName: `failover-${appId}`, step: 20_000 }),
    });
    expect([200, 201]).toContain(res.status);
    const result = await runScenario({
      name: `redis failover, REDIS_WAIT_REPLICAS=${waitReplicas}`,
      services,
      path: (n) => `/api/id/${appId}?gatePass=user-${n % 16}&count=100`,
      probe: (n) => `/api/id/${appId}?gatePass=probe-${n}&count=10`,
      targetIds: IDS,
      concurrency: 8,
      fault: async () => {
        // The replica falls behind (its link is cut) while pops go on at the primary…
        link.cut();
        await sleep(1000);
        // …the primary dies before the replica catches up…
        await primary.process.stop('SIGKILL');
        // …the replica is promoted and the "virtual IP" moved to it.
        await replica.command(['REPLICAOF', 'NO', 'ONE']);
        proxy.switchTo(replica.port);
        // The old primary comes back empty as the new replica (as Sentinel would re-point it).
        await primary.start();
        await replicaOf(primary, replica.port);
      },
    });
    await Promise.all(services.map((s) => s.kill('SIGKILL')));
    console.log(summary(result));
    return result;
  }

  it('without protection: the promoted replica hands out IDs again (the hazard)', async () => {
    const r = await failover(1, 0);
    console.log(`[chaos] failover without REDIS_WAIT_REPLICAS: ${r.ledger.duplicates.length} IDs issued twice`);
    expect(r.ledger.duplicates.length).toBeGreaterThan(0);
  }, 300_000);

  it('with REDIS_WAIT_REPLICAS=1: zero duplicates, unconfirmed pops answered 503 QUEUE_NOT_REPLICATED', async () => {
    const r = await failover(2, 1);
    console.log(`[chaos] failover with REDIS_WAIT_REPLICAS=1: ${r.ledger.duplicates.length} IDs issued twice`);
    expect(r.ledger.duplicates.slice(0, 5)).toEqual([]);
    expect([...r.during.violations, ...r.after.violations].slice(0, 5)).toEqual([]);
    expect(r.during.errors.get('503 -6') ?? 0).toBeGreaterThan(0);
    expect(r.unrecovered).toEqual([]);
    expect(r.ledger.size).toBeGreaterThanOrEqual(IDS);
  }, 300_000);
});
