import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { INDEX_SHIFT, decomposeQueueId, lowBits, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { RefillAhead } from '../../../src/queue-id/core/refill-ahead';
import { AllocationResult } from '../../../src/queue-id/id-alloc.repository';
import { BackgroundRefills } from '../../../src/queue-id/refill/background-refills';
import { SegmentAllocation } from '../../../src/queue-id/refill/segment-allocation';
import { RefillMonitor, RefillOutcome, RefillTrigger } from '../../../src/queue-id/refill-monitor';
import Redis from 'ioredis';
import { pollUntil } from '../../support/poll';
import { OwnRedisServer } from '../../support/redis-server';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/** Refill-ahead and the adaptive refill size on (test-env turns both off for the other suites). */
const AHEAD = { QUEUE_REFILL_AHEAD: 'true', QUEUE_REFILL_MAX_SIZE: '100000' };

function gatePassForShard(shard: number, from = 0): string {
  for (let i = from; ; i++) {
    if (shardOf(`u${i}`) === shard) {
      return `u${i}`;
    }
  }
}

/** Counts of finished refills by trigger and outcome, from the app's RefillMonitor. */
function countRefills(app: NestFastifyApplication): Map<string, number> {
  const counts = new Map<string, number>();
  app.get(RefillMonitor).subscribe((trigger: RefillTrigger, outcome: RefillOutcome) => {
    const key = `${trigger}/${outcome}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  return counts;
}

describe('refill ahead: one hot shard at step 100', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  const APP_ID = 21;
  const SHARD = 5;
  const BURSTS = 1000;
  /** Concurrent requests per burst: at most the smallest threshold (0.2 × step 100 = 20). */
  const BURST = 20;

  beforeAll(async () => {
    env = await createTestEnv('qahead');
    app = await startApp(env.config(AHEAD));
    const created = await request(app, 'POST', '/admin/apps', { body: { appId: APP_ID, appName: 'hot', step: 100 } });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('after warm-up no request waits for a refill, the refill size grows, every index once and none skipped', async () => {
    const refill = app.get(BackgroundRefills);
    const counts = countRefills(app);
    const gatePass = gatePassForShard(SHARD);
    const indexes: bigint[] = [];
    const errors: string[] = [];
    let demandAfterWarmUp = -1;
    const startedAt = Date.now();
    for (let burst = 0; burst < BURSTS; burst++) {
      const replies = await Promise.all(
        Array.from({ length: BURST }, () => request(app, 'GET', `/api/id/${APP_ID}?gatePass=${gatePass}`, { token: null })),
      );
      for (const res of replies) {
        if (res.status !== 200) {
          errors.push(`${res.status} ${res.body}`);
          continue;
        }
        const parts = decomposeQueueId(BigInt(res.body));
        expect(parts.appId).toBe(APP_ID);
        expect(parts.shardId).toBe(SHARD);
        indexes.push(parts.index);
      }
      // Between bursts the background refill (at most one) may finish, as it would between
      // requests of a real client: the test never asks for a refill itself.
      await refill.settled();
      if (burst === 0) {
        // Warm-up: the empty list of the first request is filled on demand (that request waits).
        demandAfterWarmUp = counts.get('demand/refilled') ?? 0;
        expect(demandAfterWarmUp).toBe(1);
      }
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const size = app.get(RefillAhead).currentSize(APP_ID, SHARD, 100);
    console.log(
      `refill ahead: ${indexes.length} IDs in ${seconds.toFixed(1)} s; refills ${JSON.stringify([...counts])}; refill size now ${size}`,
    );
    expect(errors).toEqual([]);
    expect(indexes).toHaveLength(BURSTS * BURST);
    // No request waited for a refill after the warm-up.
    expect(counts.get('demand/refilled') ?? 0).toBe(demandAfterWarmUp);
    expect(counts.get('ahead/refilled') ?? 0).toBeGreaterThan(0);
    expect(counts.get('ahead/failed') ?? 0).toBe(0);
    // One instance, no other refills: the indexes are exactly 1..N, each once.
    const sorted = [...indexes].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    sorted.forEach((index, i) => expect(index).toBe(BigInt(i + 1)));
    // Refills lasted far less than 15 minutes: the size doubled from the step.
    expect(size).toBeGreaterThan(100);
    expect(size % 100).toBe(0);
    // ...and the admin detail shows it for that shard (the step for the others).
    const detail = (await request(app, 'GET', `/admin/apps/${APP_ID}`)).json<{
      shards: Array<{ shardId: number; refillSize: number; step: number }>;
    }>();
    expect(detail.shards.find((s) => s.shardId === SHARD)?.refillSize).toBe(size);
    expect(detail.shards.find((s) => s.shardId === SHARD + 1)?.refillSize).toBe(100);
    // ...and the metric.
    const metrics = await request(app, 'GET', '/metrics', { token: null });
    // The app's largest refill size on this instance: the hot shard's.
    expect(metrics.body).toContain(`shardleaf_queue_refill_size{app="${APP_ID}"} ${size}`);
    expect(metrics.body).toMatch(/shardleaf_queue_refills_total\{trigger="ahead",outcome="refilled"\} [1-9]/);
  });

  it('a grown refill is cut exactly at max_limit_id, and the shard then answers exhaustion', async () => {
    const appId = 22;
    const shard = 3;
    // max_limit_id = the ID of index 1000 on shard 3: indexes up to 1000 fit there.
    const limit = (1000n << INDEX_SHIFT) | lowBits(appId, shard);
    const created = await request(app, 'POST', '/admin/apps', {
      body: { appId, appName: 'edge', step: 100, maxLimitId: limit.toString() },
    });
    expect(created.status).toBe(201);
    const gatePass = gatePassForShard(shard);
    const seen = new Set<bigint>();
    const refill = app.get(BackgroundRefills);
    let exhausted = 0;
    for (let burst = 0; burst < 60 && exhausted === 0; burst++) {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}`, { token: null })),
      );
      for (const res of replies) {
        if (res.status === 410) {
          exhausted++;
          continue;
        }
        expect(res.status).toBe(200);
        const id = BigInt(res.body);
        expect(id <= limit).toBe(true);
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      await refill.settled();
    }
    // Every index 1..1000 handed out once, the grown refills never past the limit, then 410.
    expect(seen.size).toBe(1000);
    expect(exhausted).toBeGreaterThan(0);
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shard])) as Array<{
      max_id: string;
    }>;
    expect(rows[0].max_id).toBe('1000');
    expect(app.get(RefillAhead).currentSize(appId, shard, 100)).toBeGreaterThan(100);
  });
  it('a background refill of an app deleted between its allocation and its push pushes nothing', async () => {
    const appId = 24;
    const shard = 9;
    const list = `${env.keyPrefix}idList_${appId}_${shard}`;
    expect((await request(app, 'POST', '/admin/apps', { body: { appId, appName: 'gone', step: 100 } })).status).toBe(201);
    const gatePass = gatePassForShard(shard);
    // Warm-up: the first request fills the list on demand (1..100, 99 queued).
    expect((await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}`, { token: null })).status).toBe(200);
    expect(await env.redis.llen(list)).toBe(99);

    // Hold the next refill between its allocation and its push (where the chaos suite's held
    // SegmentAllocation waits).
    const refill = app.get(BackgroundRefills);
    const segments = app.get(SegmentAllocation);
    const ahead = app.get(RefillAhead);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const allocated = new Promise<void>((resolve) => (reached = resolve));
    const allocate = segments.allocate.bind(segments);
    const hold = jest.spyOn(segments, 'allocate').mockImplementation(async (...args): Promise<AllocationResult | null> => {
      const allocation = await allocate(...args);
      reached();
      await gate;
      return allocation;
    });
    try {
      // 99 → 20 queued: at the threshold, one background refill starts; the request is answered.
      const res = await request(app, 'GET', `/api/id/${appId}?gatePass=${gatePass}&count=79`, { token: null });
      expect(res.status).toBe(200);
      await allocated;
      expect(ahead.inFlight(appId, shard)).toBe(true);
      const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shard])) as Array<{
        max_id: string;
      }>;
      // The refill grew to 2 steps (the last one lasted far less than 15 minutes): 101..300.
      expect(rows[0].max_id).toBe('300');
      expect((await request(app, 'DELETE', `/admin/apps/${appId}`)).status).toBe(200);
      release();
      await refill.settled();
    } finally {
      release();
      hold.mockRestore();
    }
    // The delete raised the marker to the tombstone (300): the held push of 101..300 was refused.
    expect(await env.redis.llen(list)).toBe(0);
    expect(await env.redis.get(`{${list}}:pushed`)).toBe('300');
    expect(ahead.inFlight(appId, shard)).toBe(false);
  });
});

describe('refill ahead with REDIS_WAIT_REPLICAS (the pop, its LLEN and the WAIT in one pipeline)', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  const servers: OwnRedisServer[] = [];
  let replica: Redis;

  beforeAll(async () => {
    env = await createTestEnv('qaheadw');
    const [primary, secondary] = await Promise.all([OwnRedisServer.start(), OwnRedisServer.start()]);
    servers.push(primary, secondary);
    replica = new Redis(secondary.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    await replica.replicaof('127.0.0.1', primary.port);
    await pollUntil('the replica to sync', async () => (await replica.info('replication')).includes('master_link_status:up'));
    app = await startApp(
      env.config({ ...AHEAD, REDIS_URL: primary.url, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '2000', REDIS_COMMAND_TIMEOUT_MS: '5000' }),
    );
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 25, appName: 'waited', step: 10 } })).status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    replica?.disconnect();
    for (const server of servers) {
      await server.destroy();
    }
    await env?.cleanup();
  });

  it('refills ahead from the confirmed pops: one demand refill (the empty list), then none', async () => {
    const counts = countRefills(app);
    const refill = app.get(BackgroundRefills);
    const gatePass = gatePassForShard(1);
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const res = await request(app, 'GET', `/api/id/25?gatePass=${gatePass}`, { token: null });
      expect(res.status).toBe(200);
      expect(seen.has(res.body)).toBe(false);
      seen.add(res.body);
      await refill.settled();
    }
    expect(counts.get('demand/refilled') ?? 0).toBe(1);
    expect(counts.get('ahead/refilled') ?? 0).toBeGreaterThan(0);
    expect(counts.get('ahead/failed') ?? 0).toBe(0);
  });
});
