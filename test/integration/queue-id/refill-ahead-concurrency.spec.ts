import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { BackgroundRefills } from '../../../src/queue-id/refill/background-refills';
import { LowListSweep } from '../../../src/queue-id/refill/low-list-sweep';
import { RefillMonitor, RefillOutcome, RefillTrigger } from '../../../src/queue-id/refill-monitor';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/**
 * Two instances with refill-ahead and the adaptive size on share a few hot shards at step 100:
 * low-water refills of both instances, on-demand refills of emptied lists and both cron sweeps race
 * for the same shards; halfway one instance is replaced by a fresh one (its refill state starts
 * again at the step). Every ID goes into one ledger: none may appear twice.
 */
const AHEAD = { QUEUE_REFILL_AHEAD: 'true', QUEUE_REFILL_MAX_SIZE: '100000' };
const TOTAL = 120_000;
const APP_ID = 23;
const STEP = 100;
const WORKERS_PER_INSTANCE = 16;
const COUNTS = [1, 1, 1, 1, 3, 20, 1, 50];

describe('refill ahead: two instances, hot shards at step 100, one ledger', () => {
  let env: TestEnv;
  const apps: NestFastifyApplication[] = [];

  beforeAll(async () => {
    env = await createTestEnv('qaheadc');
    apps.push(await startApp(env.config(AHEAD)), await startApp(env.config(AHEAD)));
    const created = await request(apps[0], 'POST', '/admin/apps', { body: { appId: APP_ID, appName: 'hot2', step: STEP } });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    for (const app of apps) {
      await app.close();
    }
    await env?.cleanup();
  });

  it('hands out every ID once across both instances and a restart', async () => {
    // Four hot shards: every request goes to one of them.
    const gatePasses: string[] = [];
    const shards = new Set<number>();
    for (let i = 0; shards.size < 4; i++) {
      const shard = shardOf(`hot-${i}`);
      if (!shards.has(shard)) {
        shards.add(shard);
        gatePasses.push(`hot-${i}`);
      }
    }
    const counts = new Map<string, number>();
    const watch = (app: NestFastifyApplication) =>
      app.get(RefillMonitor).subscribe((trigger: RefillTrigger, outcome: RefillOutcome) => {
        counts.set(`${trigger}/${outcome}`, (counts.get(`${trigger}/${outcome}`) ?? 0) + 1);
      });
    apps.forEach(watch);

    const slots = [apps[0], apps[1]];
    const pending = new Map<NestFastifyApplication, number>();
    const seen = new Set<string>();
    const errors: string[] = [];
    let duplicates = 0;
    let issued = 0;
    let requestNo = 0;
    let running = true;
    let reachHalfway = (): void => undefined;
    const halfway = new Promise<void>((resolve) => (reachHalfway = resolve));

    const sweeper = async (slot: number) => {
      while (running) {
        await slots[slot].get(LowListSweep).run();
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const worker = async (slot: number) => {
      while (issued < TOTAL) {
        const n = requestNo++;
        const gatePass = gatePasses[n % gatePasses.length];
        const count = COUNTS[n % COUNTS.length];
        const app = slots[slot];
        pending.set(app, (pending.get(app) ?? 0) + 1);
        const url = `/api/id/${APP_ID}?gatePass=${gatePass}${count > 1 ? `&count=${count}` : ''}`;
        const res = await request(app, 'GET', url, { token: null }).finally(() => pending.set(app, pending.get(app)! - 1));
        if (res.status !== 200) {
          errors.push(`${res.status} ${res.body}`);
          continue;
        }
        const ids = count > 1 ? res.json<{ ids: string[] }>().ids : [res.body];
        expect(ids).toHaveLength(count);
        for (const id of ids) {
          const parts = decomposeQueueId(BigInt(id));
          if (parts.appId !== APP_ID || parts.shardId !== shardOf(gatePass) || parts.index < 1n) {
            throw new Error(`bad bits in ${id} for ${gatePass}`);
          }
          if (seen.has(id)) {
            duplicates++;
          }
          seen.add(id);
        }
        issued += ids.length;
        if (issued >= TOTAL / 2) {
          reachHalfway();
        }
      }
    };
    // Halfway: instance 1 is replaced by a fresh one (new refill state, same database and Redis).
    const restarter = async () => {
      await halfway;
      const old = slots[1];
      const fresh = await startApp(env.config(AHEAD));
      watch(fresh);
      apps.push(fresh);
      slots[1] = fresh;
      await pollUntil('the requests in flight on the old instance', () => (pending.get(old) ?? 0) === 0, { intervalMs: 5 });
      await old.close();
      apps.splice(apps.indexOf(old), 1);
    };

    const background = [sweeper(0), sweeper(1)];
    await Promise.all([
      restarter(),
      ...Array.from({ length: WORKERS_PER_INSTANCE }, () => worker(0)),
      ...Array.from({ length: WORKERS_PER_INSTANCE }, () => worker(1)),
    ]);
    running = false;
    await Promise.all(background);
    await Promise.all(slots.map((app) => app.get(BackgroundRefills).settled()));

    console.log(
      `refill ahead, 2 instances: ${issued} IDs, ${seen.size} distinct, ${duplicates} duplicates; refills ${JSON.stringify([...counts])}`,
    );
    expect(errors).toEqual([]);
    expect(issued).toBeGreaterThanOrEqual(TOTAL);
    expect(duplicates).toBe(0);
    expect(seen.size).toBe(issued);
    // The background refills did run and raced (both instances, sweeps and demand alike).
    expect(counts.get('ahead/refilled') ?? 0).toBeGreaterThan(0);
    expect(counts.get('ahead/failed') ?? 0).toBe(0);
  });
});
