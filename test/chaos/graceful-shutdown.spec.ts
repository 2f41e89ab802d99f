import { DEFAULT_TWEPOCH } from '../../src/config/snowflake-config';
import { ZookeeperClient } from '../../src/infra/zookeeper/zookeeper-client';
import { decodeId } from '../../src/snowflake/core/snowflake-layout';
import { RecyclePaths } from '../../src/snowflake/registries/zk-recycle-pools';
import { ZookeeperServer } from '../integration/snowflake/zookeeper-server';
import { MariaDbProcess, RedisProcess } from './support/backends';
import { IdLedger } from './support/id-ledger';
import { checkError } from './support/load-driver';
import { ManagedProcess } from './support/managed-process';
import { ServiceProcess, ensureBuilt } from './support/service-process';

/**
 * SIGTERM while requests are in flight and one of them holds a refill lock: the in-flight
 * requests finish with their IDs, the process exits by itself, the Redlock lock is released (not
 * left to its TTL), the zk_recycle worker id is back in notuse, and nothing handed out
 * before the stop is handed out again after the restart.
 */
const ADMIN = 'chaos-admin-token';

describe('graceful shutdown on SIGTERM', () => {
  let redis: RedisProcess;
  let db: MariaDbProcess;
  let zk: ZookeeperServer;
  let zkClient: ZookeeperClient;

  beforeAll(async () => {
    ensureBuilt();
    [redis, db, zk] = await Promise.all([RedisProcess.create(), MariaDbProcess.create(), ZookeeperServer.create()]);
    await db.query('CREATE DATABASE shardleaf_stop');
    zkClient = new ZookeeperClient({ address: zk.address, sessionTimeoutMs: 5000, connectTimeoutMs: 5000 });
  }, 180_000);

  afterAll(async () => {
    await ManagedProcess.killAll();
    await zkClient?.close();
    await Promise.all([redis?.destroy(), db?.destroy(), zk?.destroy()]);
  }, 60_000);

  it('finishes in-flight requests, releases locks and the worker id, exits, and loses no ID to a duplicate', async () => {
    const service = await ServiceProcess.create('stop1', {
      DATABASE_URL: db.url('shardleaf_stop'),
      REDIS_URL: redis.url,
      ZK_ADDRESS: zk.address,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      SNOWFLAKE_MODE: 'zk_recycle',
      SNOWFLAKE_NAME: 'stop',
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      QUEUE_REFILL_CRON: 'off',
      QUEUE_RELOAD_CRON: 'off',
      SEGMENT_SYNC_CRON: 'off',
    });
    await service.start({ TEST_REFILL_DELAY_MS: '1500' });
    const created = await fetch(`${service.baseUrl}/admin/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appId: 1, appName: 'stop', step: 5000 }),
    });
    expect(created.status).toBe(201);
    const ledger = new IdLedger();
    const workerId = decodeId(BigInt(await (await fetch(`${service.baseUrl}/api/snowflake/get/x`)).text()), DEFAULT_TWEPOCH).workerId;

    // Requests whose shards are empty: each refills under its lock, held 1.5 s by the test hook.
    const since = service.process.log.length;
    const inFlight = Array.from({ length: 6 }, async (_, i) => {
      const res = await fetch(`${service.baseUrl}/api/id/1?gatePass=user-${i}&count=1000`);
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    });
    // SIGTERM only once every request is in flight: each one's refill (6 distinct shards) holds.
    // Waiting for the first only raced the other five under load (they arrived after the SIGTERM).
    const holding = new Set<string>();
    for (let offset = since; holding.size < 6; ) {
      const m = await service.process.waitForLine(/TEST_REFILL_DELAY_MS: holding (\S+)/, 30_000, offset);
      holding.add(m[1]);
      offset += m.index + m[0].length;
    }
    service.up = false;
    await stopAndWait(service);

    const results = await Promise.all(inFlight);
    for (const r of results) {
      if (r.status === 200) {
        for (const id of (JSON.parse(r.body) as { ids: string[] }).ids) {
          ledger.add(id, 'before-stop');
        }
      } else {
        expect(checkError(r.status, r.contentType, r.body)).toBeNull();
      }
    }
    const served = results.filter((r) => r.status === 200).length;
    console.log(`[chaos] SIGTERM with 6 requests in flight: ${served} finished with their IDs, ${ledger.size} IDs`);
    expect(served).toBe(6);

    // Locks released at once (their TTL is 10 s), worker id returned to notuse.
    expect(await redis.command(['KEYS', 'id.gen.lock_*'])).toEqual([]);
    const paths = new RecyclePaths('stop');
    expect(await zkClient.getData(paths.inuseNode(workerId))).toBeNull();
    expect(await zkClient.getData(paths.notuseNode(workerId))).not.toBeNull();

    // After a restart, nothing handed out before the stop comes out again.
    await service.start();
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${service.baseUrl}/api/id/1?gatePass=user-${i % 12}&count=1000`);
      expect(res.status).toBe(200);
      for (const id of ((await res.json()) as { ids: string[] }).ids) {
        ledger.add(id, 'after-restart');
      }
    }
    console.log(`[chaos] graceful shutdown: ${ledger.checked} IDs checked, ${ledger.duplicates.length} duplicates`);
    expect(ledger.duplicates.slice(0, 5)).toEqual([]);
  }, 120_000);
});

/** SIGTERM, then the process must exit by itself (a hang fails the test after 15 s). */
async function stopAndWait(service: ServiceProcess): Promise<void> {
  const exited = service.process.exited(15_000);
  process.kill(service.process.pid as number, 'SIGTERM');
  const code = await exited.catch((err: Error) => {
    throw new Error(`${err.message}; its output:\n${service.process.log.slice(-3000)}`);
  });
  // Nest re-raises the signal after closing: killed by SIGTERM (null) or a clean 0.
  expect(code === null || code === 0).toBe(true);
}
