import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { redisUrlParts } from '../../../src/config/redis-config';
import { composeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { PopConnection } from '../../../src/queue-id/redis/pop-connection';
import { countConnectionPops } from '../../support/connection-pops-served';
import { ReplyCutProxy } from '../../support/reply-cut-proxy';
import { TEST_REDIS_URL, TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';

/**
 * The pop connection of batches and single gets (pop-connection.ts, decisions 0017 and 0041) on a
 * real Redis: a reply cut in the middle gives BACKEND_UNAVAILABLE and loses the popped entries (a
 * gap), the next request reconnects and gets the entries after them; no ID is returned twice, none
 * out of order. A single get's malformed and over-limit entries are answered as get(…, 1) answers
 * them. AUTH and SELECT of REDIS_URL go first on the connection.
 */
const APP = 9;
const GATE_PASS = 'bob';
const SHARD = shardOf(GATE_PASS);
const BATCH = 1000;
const FIRST = 5_000_000;

describe('the pop connection (batches and single gets)', () => {
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

  /** The app with Redis reached through the proxy, and app APP created. */
  async function appViaProxy(extra: Record<string, string>): Promise<NestFastifyApplication> {
    const url = new URL(TEST_REDIS_URL);
    url.port = String(proxy.port);
    url.hostname = '127.0.0.1';
    const app = await startApp(env.config({ ...extra, REDIS_URL: url.toString() }));
    const created = await request(app, 'POST', '/admin/apps', { body: { appId: APP, appName: 'raw-pop', step: 1000 } });
    if (created.status !== 200 && created.status !== 201) {
      await app.close();
      throw new Error(`creating app ${APP} answered ${created.status}`);
    }
    return app;
  }

  it.each([
    ['refill ahead on (LPOP + LLEN)', { QUEUE_REFILL_AHEAD: 'true' }, 40],
    ['refill ahead off (LPOP)', { QUEUE_REFILL_AHEAD: 'false' }, 40],
    ['cut right after the array header', {}, 7],
  ])('%s: a reply cut mid-way is a 503 and a gap; the next request reconnects', async (_name, extra, keep) => {
    const app = await appViaProxy(extra);
    try {
      const pops = countConnectionPops(app);
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

  it.each([
    ['refill ahead off', { QUEUE_REFILL_AHEAD: 'false' }, 12],
    ['refill ahead on, after a batch read the length', { QUEUE_REFILL_AHEAD: 'true' }, 12],
    ['cut right after the array header', { QUEUE_REFILL_AHEAD: 'false' }, 4],
  ])('single get, %s: pops on this connection; a reply cut mid-way is a 503 and a gap', async (name, extra, keep) => {
    const app = await appViaProxy(extra);
    try {
      const indexes = Array.from({ length: 3 * BATCH }, (_, i) => FIRST + i);
      await env.redis.multi().del(listKey()).rpush(listKey(), ...indexes.map(String)).exec();
      const single = async (): Promise<string> => {
        const res = await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}`);
        expect(res.status).toBe(200);
        return res.body;
      };
      let taken = 0;
      if (name.includes('after a batch')) {
        expect(await batch(app)).toEqual(indexes.slice(0, BATCH).map(idOf));
        taken = BATCH;
      }
      const pops = countConnectionPops(app);
      const got = [await single(), await single()];
      expect(got).toEqual(indexes.slice(taken, taken + 2).map(idOf));
      expect(pops.served).toBe(2);

      // `LPOP key 1`: the server pops one entry, the client gets `keep` bytes of `*1\r\n$7\r\n5001002\r\n`.
      const cut = proxy.cutOnce((req) => req.includes(`LPOP\r\n$${Buffer.byteLength(listKey())}\r\n${listKey()}\r\n$1\r\n1\r\n`), keep);
      const failed = await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}`);
      expect(await cut).toBe(keep);
      expectError(failed, 503, -109);

      // Reconnected: the entry after the lost one, never the lost one, never twice.
      got.push(await single());
      expect(got[2]).toBe(idOf(indexes[taken + 3]));
      expect(pops.served).toBe(3);
      expect(await env.redis.llen(listKey())).toBe(3 * BATCH - taken - 4);
      expect(new Set(got).size).toBe(3);
    } finally {
      await app.close();
    }
  });

  it.each([
    ['off', 1],
    ['on', 2],
  ])('single get, refill ahead %s: a malformed entry is dropped and one above the limit exhausts the shard, as get(…, 1)', async (ahead, offset) => {
    const app = await startApp(env.config({ QUEUE_REFILL_AHEAD: ahead === 'on' ? 'true' : 'false' }));
    // An app of its own: its limit differs from the one the tests above created.
    const appId = APP + offset;
    const key = `${env.keyPrefix}idList_${appId}_${SHARD}`;
    const id = (index: number): string => composeQueueId(BigInt(index), SHARD, appId).toString();
    try {
      const maxLimitId = composeQueueId(BigInt(FIRST + 10), SHARD, appId).toString();
      const created = await request(app, 'POST', '/admin/apps', { body: { appId, appName: 'raw-pop-limit', step: 1000, maxLimitId } });
      expect([200, 201]).toContain(created.status);
      await env.redis.multi().del(key).rpush(key, String(FIRST), 'x1', String(FIRST + 1), String(FIRST + 11), String(FIRST + 2)).exec();
      const pops = countConnectionPops(app);
      const answers: Array<string | number> = [];
      for (let i = 0; i < 3; i++) {
        const res = await request(app, 'GET', `/api/id/${appId}?gatePass=${GATE_PASS}`);
        answers.push(res.status === 200 ? res.body : `${res.status} ${res.json<{ code: number }>().code}`);
      }
      // 'x1' dropped (the get goes on to the next entry); FIRST + 11 above the limit: 410 QUEUE_EXHAUSTED.
      expect(answers).toEqual([id(FIRST), id(FIRST + 1), '410 -5']);
      if (ahead === 'off') {
        // With refill ahead on, the first pops read the length (a script through ioredis).
        expect(pops.served).toBeGreaterThanOrEqual(3);
      }
    } finally {
      await app.close();
    }
  });

  it('sends SELECT of the URL db first, and fails pops after an AUTH error (then backs off)', async () => {
    const db = new Redis(TEST_REDIS_URL.replace(/\/\d*$/, '') + '/5', { maxRetriesPerRequest: 1 });
    const key = `${env.keyPrefix}raw-select`;
    const selected = new PopConnection(redisUrlParts(TEST_REDIS_URL.replace(/\/\d*$/, '') + '/5'), 2000);
    const refused = new PopConnection(redisUrlParts(TEST_REDIS_URL.replace('://', '://user:wrong@')), 2000);
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
