import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { LowListSweep } from '../../../src/queue-id/refill/low-list-sweep';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/**
 * Two service instances (separate Nest apps with their own DB pools and Redis clients) share one
 * MariaDB database and one Redis prefix. They hand out 200k IDs under concurrent load while
 * on-demand refills (small step) and both instances' cron sweeps race for the same shards.
 */
const TOTAL = 200_000;
const APP_ID = 9;
const STEP = 300;
const WORKERS_PER_INSTANCE = 24;
const COUNTS = [1, 1, 1, 3, 50, 250, 1000];

describe('queue IDs: two instances, 200k IDs, racing refills', () => {
  let env: TestEnv;
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('qconc');
    a = await startApp(env.config());
    b = await startApp(env.config());
    const created = await request(a, 'POST', '/admin/apps', { body: { appId: APP_ID, appName: 'conc', step: STEP } });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await env?.cleanup();
  });

  it('hands out every ID once, with the right shard and appId bits', async () => {
    const seen = new Set<string>();
    let duplicates = 0;
    let issued = 0;
    let requestNo = 0;
    const errors: string[] = [];
    let sweeping = true;

    const sweeper = async (app: NestFastifyApplication) => {
      const sweep = app.get(LowListSweep);
      while (sweeping) {
        await sweep.run();
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const worker = async (app: NestFastifyApplication) => {
      while (issued < TOTAL) {
        const n = requestNo++;
        const gatePass = `user-${n % 5000}@example.com`;
        const count = COUNTS[n % COUNTS.length];
        const url = `/api/id/${APP_ID}?gatePass=${encodeURIComponent(gatePass)}${count > 1 ? `&count=${count}` : ''}`;
        const res = await request(app, 'GET', url, { token: null });
        if (res.status !== 200) {
          errors.push(`${res.status} ${res.body}`);
          continue;
        }
        const ids = count > 1 ? res.json<{ ids: string[] }>().ids : [res.body];
        expect(ids).toHaveLength(count);
        const shard = shardOf(gatePass);
        for (const id of ids) {
          expect(id).toMatch(/^[1-9][0-9]*$/);
          const parts = decomposeQueueId(BigInt(id));
          if (parts.appId !== APP_ID || parts.shardId !== shard || parts.index < 1n) {
            throw new Error(`bad bits in ${id} for ${gatePass}: ${JSON.stringify({ ...parts, index: String(parts.index) })}`);
          }
          if (seen.has(id)) {
            duplicates++;
          }
          seen.add(id);
        }
        issued += ids.length;
      }
    };

    const sweepers = [sweeper(a), sweeper(b)];
    await Promise.all([
      ...Array.from({ length: WORKERS_PER_INSTANCE }, () => worker(a)),
      ...Array.from({ length: WORKERS_PER_INSTANCE }, () => worker(b)),
    ]);
    sweeping = false;
    await Promise.all(sweepers);

    console.log(`queue concurrency: ${issued} IDs from 2 instances, ${seen.size} distinct, ${duplicates} duplicates`);
    expect(errors).toEqual([]);
    expect(issued).toBeGreaterThanOrEqual(TOTAL);
    expect(duplicates).toBe(0);
    expect(seen.size).toBe(issued);
  });
});
