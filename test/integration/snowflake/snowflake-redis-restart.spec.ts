import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { JS_SAFE_LAYOUT, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { RedisWorkerLeaseStore } from '../../../src/snowflake/registries/redis-worker-lease-store';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { OwnRedisServer } from '../../support/redis-server';
import { request } from '../../support/test-env';
import { QUIET_ENV, uniqueName } from './snowflake-harness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TTL = 3000;

async function runId(redis: Redis): Promise<string> {
  return /run_id:(\w+)/.exec(await redis.info('server'))?.[1] ?? '';
}

/**
 * SNOWFLAKE_MODE=redis when Redis comes back with an OLDER copy of the lease hash (a restart from
 * an RDB snapshot; a restore or a failover to a lagging replica look the same): leases granted
 * after the copy are missing, and a lease that had expired there shows its holder again. Our own
 * redis-server (SAVE, kill -9, start again from the snapshot), never the shared one.
 */
describe('snowflake redis mode: Redis restarted from an older snapshot', () => {
  const suite = appSuite('sf_redis_restart');
  let server: OwnRedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await OwnRedisServer.start();
    client = new Redis(server.url, { maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false });
  });

  afterAll(async () => {
    client?.disconnect();
    await server?.destroy();
  });

  async function crashAndRestartFromSnapshot(): Promise<void> {
    await server.stop(); // SIGKILL: nothing saved after the SAVE
    await server.resume();
    await pollUntil('the test client to reconnect', async () => (await client.ping()) === 'PONG', { tolerateErrors: true });
  }

  function store(key: string): RedisWorkerLeaseStore {
    const redis = new Redis(server.url, { maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false });
    return new RedisWorkerLeaseStore(redis, key, { serverSkewMs: TTL / 5, epochWaitMs: TTL, waitReplicas: 0, waitTimeoutMs: 100 });
  }

  const claimOf = (owner: string, ttlMs = TTL) => ({ owner, ttlMs, maxWorkerId: 31, now: Date.now(), allowanceMs: ttlMs + 5, identity: owner });

  it('the store: a lease from after the snapshot is gone, an expired one is forgotten, and no id is claimed for a TTL', async () => {
    const key = `${suite.env.keyPrefix}${uniqueName('store')}`;
    const leases = store(key);
    try {
      expect(await leases.claim(claimOf('A'))).toEqual({ kind: 'wait', waitMs: TTL });
      await client.hset(key, 'since', '0'); // skip the first start's wait
      expect(await leases.claim(claimOf('A'))).toMatchObject({ kind: 'claimed', workerId: 0 });
      expect(await leases.renew(0, 'A', TTL, Date.now() + TTL)).toBe('renewed');
      await client.save(); // the copy Redis comes back with: A holds id 0 until now + TTL
      // A goes on renewing past the copy's expiry of its lease; X claims id 1 after the copy.
      for (let k = 0; k < 4; k++) {
        await sleep(1000);
        expect(await leases.renew(0, 'A', TTL, Date.now() + TTL)).toBe('renewed');
      }
      const aRecorded = Number(await client.hget(key, 't:0'));
      expect(await leases.claim(claimOf('X'))).toMatchObject({ kind: 'claimed', workerId: 1 });
      const runBefore = await runId(client);
      await crashAndRestartFromSnapshot();
      expect(await runId(client)).not.toBe(runBefore);
      // X's lease is not in the copy; A's is, but expired there (X could have been given id 0 in
      // the history that was lost): both are told their lease is gone.
      expect(await leases.renew(1, 'X', TTL, Date.now() + TTL)).toBe('lost');
      expect(await leases.renew(0, 'A', TTL, Date.now() + TTL)).toBe('lost');
      // No claim for a whole TTL: A's deadline (ttl - margin after its last renewal on the old
      // server) passes first. Before, X got id 0 at once, with a floor below A's recorded time.
      const wait = await leases.claim(claimOf('X'));
      expect(wait).toMatchObject({ kind: 'wait' });
      expect((wait as { waitMs: number }).waitMs).toBeGreaterThan(TTL - 1000);
      expect(await client.hget(key, 'run')).toBe(await runId(client));
      await sleep((wait as { waitMs: number }).waitMs + 5);
      expect(await leases.claim(claimOf('X'))).toMatchObject({ kind: 'claimed', workerId: 0 });
      // A's last renewal recorded aRecorded = its now + TTL; its deadline was TTL / 5 before that.
      expect(Date.now()).toBeGreaterThan(aRecorded - TTL / 5);
    } finally {
      await leases.close();
    }
  }, 60_000);

  it('the store: a lease still valid in the copy stays with its holder (its renewals go on), new claims wait', async () => {
    const key = `${suite.env.keyPrefix}${uniqueName('store-kept')}`;
    const leases = store(key);
    // A long TTL: A's lease is still far from expiring in the copy when Redis is back.
    const ttl = 20_000;
    try {
      await client.hset(key, 'since', '0', 'run', await runId(client));
      expect(await leases.claim(claimOf('A', ttl))).toMatchObject({ kind: 'claimed', workerId: 0 });
      await client.save();
      expect(await leases.claim(claimOf('X', ttl))).toMatchObject({ kind: 'claimed', workerId: 1 });
      await crashAndRestartFromSnapshot();
      expect(await leases.renew(0, 'A', ttl, Date.now() + ttl)).toBe('renewed');
      expect(await leases.renew(1, 'X', ttl, Date.now() + ttl)).toBe('lost');
      const wait = await leases.claim(claimOf('X', ttl));
      expect(wait).toMatchObject({ kind: 'wait' });
      expect((wait as { waitMs: number }).waitMs).toBeGreaterThan(TTL - 1000);
      // As if the TTL had passed (A renewing meanwhile): id 0 is A's, X gets 1.
      await client.hset(key, 'since', '0');
      expect(await leases.renew(0, 'A', ttl, Date.now() + ttl)).toBe('renewed');
      expect(await leases.claim(claimOf('X', ttl))).toMatchObject({ kind: 'claimed', workerId: 1 });
    } finally {
      await leases.close();
    }
  }, 60_000);

  /** Requests IDs from `app` until stopped; every 200's IDs with their source, every refusal's code. */
  function load(app: NestFastifyApplication, source: string) {
    const ids: Array<{ id: bigint; source: string; at: number }> = [];
    const refusals: Array<{ code: number; at: number }> = [];
    let running = true;
    const done = (async () => {
      for (let n = 0; running; n++) {
        const res = await request(app, 'GET', `/api/snowflake/get/r${n % 5}?count=50`);
        if (res.status === 200) {
          for (const id of res.json<{ ids: string[] }>().ids) {
            ids.push({ id: BigInt(id), source, at: Date.now() });
          }
        } else {
          refusals.push({ code: res.json<{ code: number }>().code, at: Date.now() });
        }
        await sleep(5);
      }
    })();
    return {
      ids,
      refusals,
      stop: async () => {
        running = false;
        await done;
      },
    };
  }

  it('two instances: no id is leased again before the holders from before have stopped; 0 duplicates, no two holders of an id at once', async () => {
    const name = uniqueName('apps');
    const key = `${suite.env.keyPrefix}snowflake:${name}:leases`;
    const env = {
      ...QUIET_ENV,
      REDIS_URL: server.url,
      SNOWFLAKE_MODE: 'redis',
      SNOWFLAKE_NAME: name,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      SNOWFLAKE_LAYOUT: 'js-safe',
      SNOWFLAKE_LEASE_TTL_MS: String(TTL),
      SNOWFLAKE_REPORT_INTERVAL_MS: '300',
    };
    const a = await suite.start(env);
    const loadA = load(a, 'A');
    await sleep(300);
    await client.save(); // A holds id 0 in the copy
    // Past the copy's expiry of A's lease (A renews all along), X leases id 1.
    await sleep(TTL + 500);
    const x = await suite.start(env);
    const loadX = load(x, 'X');
    await sleep(500);
    const restartAt = Date.now();
    try {
      await crashAndRestartFromSnapshot();
      // Both serve again, well after the new epoch's wait (a TTL) and their fresh ids' floors.
      await pollUntil('both instances to serve again after the restart', async () => {
        return [loadA, loadX].every((l) => l.ids.some((e) => e.at > restartAt + 2 * TTL + 500));
      }, { timeoutMs: 30_000, intervalMs: 200 });
    } finally {
      await Promise.all([loadA.stop(), loadX.stop()]);
    }
    const since = Number(await client.hget(key, 'since'));
    expect(since).toBeGreaterThan(restartAt);
    const all = [...loadA.ids, ...loadX.ids];
    expect(new Set(all.map((e) => String(e.id))).size).toBe(all.length);
    // Both were refused (SNOWFLAKE_LEASE_LOST) after the restart, until they held fresh leases.
    for (const l of [loadA, loadX]) {
      expect(l.refusals.some((r) => r.code === -213 && r.at > restartAt)).toBe(true);
    }
    // Per worker id, sorted by time, the holder changes at most at the handovers, never within a
    // millisecond: two holders issuing with one id at once would interleave.
    const byWorker = new Map<number, Array<{ t: number; source: string }>>();
    // Every lease from before the restart ended by its deadline, at most TTL - margin after the
    // restart (its last renewal was sent before it); fresh leases only from `since` on: no ID
    // at all in between.
    const oldLeasesEnd = restartAt + TTL - TTL / 5 + 100;
    const inTheGap: string[] = [];
    for (const e of all) {
      const { workerId, timestamp } = decodeId(e.id, DEFAULT_TWEPOCH, JS_SAFE_LAYOUT);
      const list = byWorker.get(workerId) ?? [];
      list.push({ t: timestamp, source: e.source });
      byWorker.set(workerId, list);
      if (timestamp >= oldLeasesEnd && timestamp < since) {
        inTheGap.push(`${e.source}: worker ${workerId} at ${timestamp}`);
      }
    }
    expect(inTheGap.slice(0, 5)).toEqual([]);
    // Per worker id, sorted by time, the holder changes only at a handover, and never within a
    // millisecond: two holders issuing with one id at once would interleave.
    const handovers: Array<{ workerId: number; from: number; to: number }> = [];
    for (const [workerId, list] of byWorker) {
      list.sort((p, q) => p.t - q.t);
      for (let i = 1; i < list.length; i++) {
        if (list[i].source !== list[i - 1].source) {
          handovers.push({ workerId, from: list[i - 1].t, to: list[i].t });
        }
      }
    }
    expect(handovers.length).toBeLessThanOrEqual(2);
    for (const h of handovers) {
      expect(h.to).toBeGreaterThanOrEqual(since);
      expect(h.to).toBeGreaterThan(h.from);
    }
  }, 90_000);
});
