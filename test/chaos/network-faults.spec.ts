import { pollUntil } from '../support/poll';
import { TcpProxy } from '../support/tcp-proxy';
import { MariaDbProcess, RedisProcess } from './support/backends';
import { ManagedProcess } from './support/managed-process';
import { CHAOS_SCALE, ScenarioResult, runScenario, sleep, summary } from './support/scenario';
import { ServiceProcess, ensureBuilt } from './support/service-process';

/**
 * Queue IDs when the network misbehaves rather than fails: a backend that is frozen (SIGSTOP: the
 * kernel still accepts connections and bytes, nothing is answered), a path that black-holes every
 * byte, a Redis demoted under its name. 3 instances reach Redis and MariaDB through proxies (the
 * "names"); single gets and batches under load. In each scenario: every request is answered
 * within ANSWER_BOUND_MS (503 BACKEND_UNAVAILABLE while the backend is away, never a hang),
 * SIGTERM ends an instance within STOP_BOUND_MS while the fault lasts, every instance serves again
 * by itself afterwards, and the ledger holds no ID twice.
 */
const ADMIN = 'chaos-admin-token';
const IDS_PER_SCENARIO = Math.round(150_000 * CHAOS_SCALE);
/** Every answer, an ID or a 503: the bounds are 0.5 s (Redis) and ~1.3 s (a refill on a frozen database); load adds the rest. */
const ANSWER_BOUND_MS = 3000;
/** SIGTERM to exit, whatever the backends do (podman's default grace period). */
const STOP_BOUND_MS = 10_000;

describe('queue IDs under network faults', () => {
  let redis: RedisProcess;
  let replica: RedisProcess;
  let db: MariaDbProcess;
  /** The name the instances use for Redis (a moving DNS name / virtual IP) and the path to MariaDB. */
  let redisName: TcpProxy;
  let dbPath: TcpProxy;
  let services: ServiceProcess[] = [];
  const results: ScenarioResult[] = [];

  /** Mixed load: a quarter single gets, the rest batches of 100, over 97 users. */
  const path = (appId: number) => (n: number) =>
    n % 4 === 0 ? `/api/id/${appId}?gatePass=user-${n % 97}` : `/api/id/${appId}?gatePass=user-${n % 97}&count=100`;
  const probe = (appId: number) => (n: number) => `/api/id/${appId}?gatePass=probe-${n}&count=10`;

  async function createApp(appId: number, step: number): Promise<void> {
    const res = await fetch(`${services[0].baseUrl}/admin/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appId, appName: `net-${appId}`, step }),
    });
    expect([200, 201]).toContain(res.status);
  }

  /** SIGTERM to one instance while the fault lasts: it must exit within STOP_BOUND_MS. */
  async function stopTimed(service: ServiceProcess): Promise<number> {
    const started = Date.now();
    await service.kill('SIGTERM');
    return Date.now() - started;
  }

  function expectClean(r: ScenarioResult, stopMs: number): void {
    console.log(`${summary(r)}, SIGTERM to exit: ${stopMs} ms`);
    expect(r.ledger.duplicates.slice(0, 5)).toEqual([]);
    expect([...r.during.violations, ...r.after.violations].slice(0, 5)).toEqual([]);
    expect(r.unrecovered).toEqual([]);
    expect(r.ledger.size).toBeGreaterThanOrEqual(IDS_PER_SCENARIO);
    expect(stopMs).toBeLessThan(STOP_BOUND_MS);
    // The fault was felt: requests were refused while it lasted.
    expect(r.during.errors.size).toBeGreaterThan(0);
  }

  beforeAll(async () => {
    ensureBuilt();
    [redis, replica, db] = await Promise.all([RedisProcess.create(), RedisProcess.create(), MariaDbProcess.create()]);
    await replica.command(['REPLICAOF', '127.0.0.1', String(redis.port)]);
    await db.query('CREATE DATABASE shardleaf_net');
    [redisName, dbPath] = await Promise.all([TcpProxy.start(redis.port), TcpProxy.start(db.port)]);
    const env = {
      DATABASE_URL: `mysql://root@127.0.0.1:${dbPath.port}/shardleaf_net`,
      REDIS_URL: `redis://127.0.0.1:${redisName.port}/0`,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'error',
      SNOWFLAKE_MODE: 'off',
      SEGMENT_SYNC_CRON: 'off',
      QUEUE_REFILL_CRON: '*/2 * * * * *',
      QUEUE_RELOAD_CRON: '*/5 * * * * *',
      DB_POOL_SIZE: '8',
    };
    services = await Promise.all(['n1', 'n2', 'n3'].map((name) => ServiceProcess.create(name, env)));
    await services[0].start();
    await Promise.all(services.slice(1).map((s) => s.start()));
    for (const appId of [21, 22, 23, 24]) {
      await createApp(appId, 2000);
    }
  }, 180_000);

  afterAll(async () => {
    for (const server of [redis, replica, db]) {
      try {
        server?.thaw();
      } catch {
        // not running
      }
    }
    await ManagedProcess.killAll();
    await Promise.all([redisName?.close(), dbPath?.close()]);
    await Promise.all([redis?.destroy(), replica?.destroy(), db?.destroy()]);
    const total = results.reduce((sum, r) => sum + r.ledger.checked, 0);
    console.log(`[chaos] network scenarios: ${total} IDs checked, ${results.reduce((s, r) => s + r.ledger.duplicates.length, 0)} duplicates`);
  }, 60_000);

  it('1. Redis frozen (SIGSTOP) under load, SIGTERM meanwhile, then thawed', async () => {
    let stopMs = -1;
    const r = await runScenario({
      name: 'redis frozen',
      services,
      path: path(21),
      probe: probe(21),
      targetIds: IDS_PER_SCENARIO,
      maxAnswerMs: ANSWER_BOUND_MS,
      fault: async () => {
        redis.freeze();
        try {
          await sleep(2000);
          stopMs = await stopTimed(services[2]);
          await sleep(1000);
        } finally {
          redis.thaw();
        }
        await services[2].start();
      },
    });
    results.push(r);
    expectClean(r, stopMs);
    expect(r.during.errors.get('503 -109') ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it('2. MariaDB frozen (SIGSTOP) under load, SIGTERM meanwhile, then thawed: pops from the lists go on', async () => {
    let stopMs = -1;
    let servedWhileFrozen = 0;
    const r = await runScenario({
      name: 'mariadb frozen',
      services,
      path: path(22),
      probe: probe(22),
      targetIds: IDS_PER_SCENARIO,
      maxAnswerMs: ANSWER_BOUND_MS,
      fault: async (ledger) => {
        db.freeze();
        try {
          const before = ledger.size;
          await sleep(3000);
          servedWhileFrozen = ledger.size - before;
          stopMs = await stopTimed(services[2]);
        } finally {
          db.thaw();
        }
        await services[2].start();
      },
    });
    results.push(r);
    console.log(`[chaos] IDs served from the lists while MariaDB was frozen: ${servedWhileFrozen}`);
    expectClean(r, stopMs);
    expect(servedWhileFrozen).toBeGreaterThan(0);
  }, 300_000);

  it('3. Redis and MariaDB black-holed (the paths accept and never answer), SIGTERM meanwhile, then healed', async () => {
    let stopMs = -1;
    const r = await runScenario({
      name: 'black-holed paths',
      services,
      path: path(23),
      probe: probe(23),
      targetIds: IDS_PER_SCENARIO,
      maxAnswerMs: ANSWER_BOUND_MS,
      fault: async () => {
        redisName.freeze();
        dbPath.freeze();
        try {
          await sleep(2000);
          stopMs = await stopTimed(services[2]);
          await sleep(1000);
        } finally {
          // What the black hole swallowed is lost; the connections that saw it are reset.
          redisName.heal();
          dbPath.heal();
        }
        await services[2].start();
      },
    });
    results.push(r);
    expectClean(r, stopMs);
  }, 300_000);

  it('4. Redis demoted under its name (FAILOVER, the name moved for new connections only), SIGTERM meanwhile', async () => {
    let stopMs = -1;
    const recoveredMs: number[] = [];
    const r = await runScenario({
      name: 'redis demoted, name moved',
      services,
      path: path(24),
      probe: probe(24),
      targetIds: IDS_PER_SCENARIO,
      maxAnswerMs: ANSWER_BOUND_MS,
      fault: async () => {
        await pollUntil('the replica to be in sync', async () =>
          String(await replica.command(['INFO', 'replication'])).includes('master_link_status:up'),
        );
        await redis.command(['FAILOVER', 'TO', '127.0.0.1', String(replica.port), 'TIMEOUT', '5000']);
        await pollUntil('the roles to swap', async () => String(await replica.command(['ROLE'])).startsWith('master'), {
          tolerateErrors: true,
        });
        // The open connections stay with the demoted node (READONLY to every write).
        redisName.retarget(replica.port);
        const moved = Date.now();
        await Promise.all(
          services.map(async (service, i) => {
            await pollUntil(`${service.name} to serve on the promoted node`, async () => {
              const res = await fetch(`${service.baseUrl}${probe(24)(1000 + i)}`, { signal: AbortSignal.timeout(5000) });
              await res.text();
              return res.status === 200;
            }, { timeoutMs: 10_000, intervalMs: 100, tolerateErrors: true });
            recoveredMs.push(Date.now() - moved);
          }),
        );
        stopMs = await stopTimed(services[2]);
        await services[2].start();
      },
    });
    results.push(r);
    console.log(`[chaos] gets succeeded on the promoted node ${recoveredMs.join(', ')} ms after the name moved`);
    expectClean(r, stopMs);
    expect(Math.max(...recoveredMs)).toBeLessThan(10_000);
  }, 300_000);
});
