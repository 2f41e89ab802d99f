import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { redisUrlParts } from '../../../src/config/redis-config';
import { composeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { RawBatchPop } from '../../../src/queue-id/redis/raw-batch-pop';
import { countBatchPops } from '../../support/batch-pops-served';
import { ReplyCutProxy } from '../../support/reply-cut-proxy';
import { TEST_REDIS_URL, TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/**
 * The batch pop's own connection (raw-batch-pop.ts) on a real Redis: a reply cut in the middle
 * gives BACKEND_UNAVAILABLE and loses the popped entries (a gap), the next request reconnects and
 * gets the entries after them; no ID is returned twice, none out of order. AUTH and SELECT of
 * REDIS_URL go first on the connection.
 */
const APP = 9;
const GATE_PASS = 'bob';
const SHARD = shardOf(GATE_PASS);
const BATCH = 1000;
const FIRST = 5_000_000;

describe('raw batch pop connection', () => {
  let env: TestEnv;
  let proxy: ReplyCutProxy;

  beforeAll(async () => {
    env = await createTestEnv('qrawpop');
    const target = new URL(TEST_REDIS_URL);
    proxy = await ReplyCutProxy.start(Number(target.port || 6379), target.hostname);
  });

  afterAll(async () => {
    await proxy?.close();
    await env?.cleanup();
  });

  const listKey = (): string => `${env.keyPrefix}idList_${APP}_${SHARD}`;
  const idOf = (index: number): string => composeQueueId(BigInt(index), SHARD, APP).toString();

  async function batch(app: NestFastifyApplication): Promise<string[]> {
    const res = await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}&count=${BATCH}`);
    expect(res.status).toBe(200);
    return res.json<{ ids: string[] }>().ids;
  }

  it.each([
    ['refill ahead on (LPOP + LLEN)', {}, 40],
    ['refill ahead off (LPOP)', { QUEUE_REFILL_AHEAD: 'false' }, 40],
    ['cut right after the array header', {}, 7],
  ])('%s: a reply cut mid-way is a 503 and a gap; the next request reconnects', async (_name, extra, keep) => {
    const url = new URL(TEST_REDIS_URL);
    url.port = String(proxy.port);
    url.hostname = '127.0.0.1';
    const app = await startApp(env.config({ ...extra, REDIS_URL: url.toString() }));
    try {
      const created = await request(app, 'POST', '/admin/apps', { body: { appId: APP, appName: 'raw-pop', step: 1000 } });
      expect([200, 201]).toContain(created.status);
      const pops = countBatchPops(app);
      expect(pops.enabled).toBe(true);
      const indexes = Array.from({ length: 5 * BATCH }, (_, i) => FIRST + i);
      await env.redis.multi().del(listKey()).rpush(listKey(), ...indexes.map(String)).exec();

      const first = await batch(app);
      expect(first).toEqual(indexes.slice(0, BATCH).map(idOf));
      const served = pops.served;
      expect(served).toBeGreaterThanOrEqual(1);

      // The next LPOP with a count: the server pops 1,000 entries, the client gets `keep` bytes of the reply.
      const cut = proxy.cutOnce((req) => req.includes(`LPOP\r\n$${Buffer.byteLength(listKey())}\r\n${listKey()}\r\n$4\r\n1000`), keep);
      const failed = await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}&count=${BATCH}`);
      expect(await cut).toBe(keep);
      expectError(failed, 503, -109);

      // Reconnected: the entries after the lost ones, never the lost ones, never twice.
      const third = await batch(app);
      expect(third).toEqual(indexes.slice(2 * BATCH, 3 * BATCH).map(idOf));
      expect(pops.served).toBe(served + 1);
      expect(await env.redis.llen(listKey())).toBe(2 * BATCH);
      expect(new Set([...first, ...third]).size).toBe(2 * BATCH);
    } finally {
      await app.close();
    }
  });

  it('sends SELECT of the URL db first, and fails pops after an AUTH error (then backs off)', async () => {
    const db = new Redis(TEST_REDIS_URL.replace(/\/\d*$/, '') + '/5', { maxRetriesPerRequest: 1 });
    const key = `${env.keyPrefix}raw-select`;
    const selected = new RawBatchPop(redisUrlParts(TEST_REDIS_URL.replace(/\/\d*$/, '') + '/5'), 2000);
    const refused = new RawBatchPop(redisUrlParts(TEST_REDIS_URL.replace('://', '://user:wrong@')), 2000);
    try {
      await db.rpush(key, '1', '2', 'x', '99', '3');
      expect(await selected.pop(key, 4, 10n, true)).toEqual({ indexes: [1, 2], overLimit: true, malformed: 1, length: 1 });
      expect(await selected.pop(key, 4, 10n, false)).toEqual({ indexes: [3], overLimit: false, malformed: 0, length: -1 });
      await expect(refused.pop(key, 4, 10n, true)).rejects.toThrow(/AUTH failed/);
      // Within the backoff no new connection is tried.
      await expect(refused.pop(key, 4, 10n, true)).rejects.toThrow(/unavailable/);
    } finally {
      await db.del(key);
      db.disconnect();
      await selected.close();
      await refused.close();
    }
  });
});
