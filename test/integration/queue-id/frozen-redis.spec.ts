import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueLists } from '../../../src/queue-id/core/queue-lists';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { SeenIds } from '../../support/seen-ids';
import { OwnRedisServer } from '../../support/redis-server';
import { BOUNDS_AT_DEFAULTS, InjectResult, expectError, request } from '../../support/test-env';

/**
 * A Redis frozen with SIGSTOP (a VM pause, a long stall): the kernel still accepts connections and
 * data, the server answers nothing. Single gets (ioredis) and batches (the batch pop's own
 * connection) answer 503 BACKEND_UNAVAILABLE within the bound (REDIS_COMMAND_TIMEOUT_MS, 500 ms by
 * default; asserted: 2 s, the acceptance bound), never hang; once Redis resumes, the same
 * app serves again by itself, and no ID comes out twice (the commands that timed out were never
 * sent again). Before the bounds, the first request never came back.
 */
const APP = 5;
const SINGLE = `/api/id/${APP}?gatePass=alice`;
const BATCH = `/api/id/${APP}?gatePass=bob&count=10`;
const BOUND_MS = 2000;

describe('a frozen Redis (SIGSTOP)', () => {
  const suite = appSuite('qfrozenredis');
  let redis: OwnRedisServer;
  let app: NestFastifyApplication;
  const ids = new SeenIds();

  async function timed(path: string): Promise<{ res: InjectResult; ms: number }> {
    const started = Date.now();
    const res = await request(app, 'GET', path);
    return { res, ms: Date.now() - started };
  }

  beforeAll(async () => {
    redis = await OwnRedisServer.start();
    suite.defer(() => redis.destroy());
    // Thawed before anything is closed, whatever a test left.
    suite.defer(() => redis.thaw());
    app = await suite.start({ ...BOUNDS_AT_DEFAULTS, REDIS_URL: redis.url, QUEUE_REFILL_AHEAD: 'true' });
    const created = await request(app, 'POST', '/admin/apps', { body: { appId: APP, appName: 'frozen', step: 1000 } });
    expect(created.status).toBe(201);
  });

  it('answers single gets and batches with 503 within the bound while frozen, and serves again once it resumes', async () => {
    // Both connections in use (the batch pop connects on its first pop).
    for (const path of [SINGLE, BATCH, SINGLE, BATCH]) {
      const { res } = await timed(path);
      expect(res.status).toBe(200);
      ids.record(res);
    }
    redis.freeze();
    const answered: number[] = [];
    try {
      // Several in a row: the first ones hit the frozen connections, the later ones the reconnects
      // to a server that accepts and never answers.
      for (const path of [SINGLE, BATCH, SINGLE, BATCH, SINGLE, BATCH]) {
        const { res, ms } = await timed(path);
        expectError(res, 503, -109);
        answered.push(ms);
      }
      // Concurrent ones too.
      const together = await Promise.all([SINGLE, BATCH, SINGLE, BATCH].map((path) => timed(path)));
      for (const { res, ms } of together) {
        expectError(res, 503, -109);
        answered.push(ms);
      }
    } finally {
      redis.thaw();
    }
    console.log(`[frozen redis] 503 answers in ${answered.join(', ')} ms`);
    expect(Math.max(...answered)).toBeLessThan(BOUND_MS);

    // The same app serves again by itself.
    for (const path of [SINGLE, BATCH]) {
      const res = await pollUntil(`${path} to serve again`, async () => {
        const { res: r } = await timed(path);
        return r.status === 200 ? r : false;
      }, { timeoutMs: 10_000, intervalMs: 100 });
      ids.record(res);
    }
    for (let i = 0; i < 20; i++) {
      const { res } = await timed(i % 2 === 0 ? SINGLE : BATCH);
      expect(res.status).toBe(200);
      ids.record(res);
    }
    expect(ids.duplicates).toBe(0);
  });

  it('a get in its on-demand refill when Redis freezes (its list was empty) answers 503 within the bound too', async () => {
    // App 6's lists are empty (no refill has run): every first get of a shard refills on demand.
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 6, appName: 'frozen-demand', step: 1000 } })).status).toBe(201);
    const lists = app.get<QueueLists, RedisQueueLists>(QueueLists);
    const pop = lists.pop.bind(lists);
    const answered: number[] = [];
    try {
      for (const [path, gatePass] of [
        ['/api/id/6?gatePass=carol', 'carol'],
        ['/api/id/6?gatePass=dave&count=10', 'dave'],
      ]) {
        // Frozen right after the on-demand refill's own pop (under the shard's lock) answered
        // "empty": the marker read, the claim, the push and the lock's release meet the frozen server.
        lists.pop = async (appId, shardId, n) => {
          const entries = await pop(appId, shardId, n);
          redis.freeze();
          return entries;
        };
        const { res, ms } = await timed(path);
        expectError(res, 503, -109);
        answered.push(ms);
        lists.pop = pop;
        redis.thaw();
        // Served again once it resumed (the lock its attempt may have left is released again).
        const served = await pollUntil(`${gatePass} to be served again`, async () => {
          const r = (await timed(path)).res;
          return r.status === 200 ? r : false;
        }, { timeoutMs: 10_000, intervalMs: 100 });
        ids.record(served);
      }
    } finally {
      lists.pop = pop;
      redis.thaw();
    }
    console.log(`[frozen redis, on demand] 503 answers in ${answered.join(', ')} ms`);
    expect(Math.max(...answered)).toBeLessThan(BOUND_MS);
    expect(ids.duplicates).toBe(0);
  });
});
