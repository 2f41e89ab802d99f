import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MAX_NUMBER_INDEX } from '../../../src/queue-id/core/queue-batch';
import { MAX_INDEX, composeQueueId, parseQueueEntry, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { countConnectionPops } from '../../support/connection-pops-served';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { seededRandom as rng } from '../../support/seeded-random';

/**
 * The batch path (plain LPOP + LLEN read by the pop connection, number arithmetic, the JSON body written from
 * the digits) against the path before it (`LPOP key n` as Buffers, parseQueueEntry, bigint
 * composeQueueId, toString, JSON.stringify): on the same list contents — runs with gaps, runs out
 * of order, single indexes, leading zeros, indexes around 2^39 (where the ID passes 2^53) and near
 * the 49-bit maximum — every batch must hold exactly the IDs the old path gives, in the same order.
 */
const APP = 7;
const GATE_PASS = 'alice';
const SHARD = shardOf(GATE_PASS);
const BATCH = 1000;

/** `batches × BATCH` valid entries: runs of 1..300 with gaps, jumps back, and edge indexes. */
function mixedList(batches: number, seed: number): string[] {
  const random = rng(seed);
  const edges = [1n, BigInt(MAX_NUMBER_INDEX) - 1n, BigInt(MAX_NUMBER_INDEX), BigInt(MAX_NUMBER_INDEX) + 1n, MAX_INDEX - 1n, MAX_INDEX];
  const out: string[] = [];
  let next = 1_000n;
  while (out.length < batches * BATCH) {
    const roll = random();
    if (roll < 0.55) {
      const run = 1 + Math.floor(random() * 300);
      for (let i = 0; i < run; i++) {
        out.push((next + BigInt(i)).toString());
      }
      next += BigInt(run + 1 + Math.floor(random() * 40));
    } else if (roll < 0.7) {
      // A run out of order: somewhere below, or far above 2^39.
      next = random() < 0.5 ? BigInt(Math.floor(random() * 1_000_000)) : BigInt(MAX_NUMBER_INDEX) - 500n + BigInt(Math.floor(random() * 1000));
    } else if (roll < 0.85) {
      out.push(edges[Math.floor(random() * edges.length)].toString());
    } else {
      out.push(`00${Math.floor(random() * 100_000)}`);
    }
  }
  return out.slice(0, batches * BATCH);
}

/** The old request path's IDs for entries popped from the list. */
function oldIds(popped: Buffer[]): string[] {
  return popped.map((entry) => composeQueueId(parseQueueEntry(entry) as bigint, SHARD, APP).toString());
}

describe('batch path: the same IDs as the path before it', () => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv('qbatch');
  });

  afterAll(async () => {
    await env?.cleanup();
  });

  const listKey = (): string => `${env.keyPrefix}idList_${APP}_${SHARD}`;

  /** Replaces the shard's list (atomically: a refill push lands before, and is deleted, or after). */
  async function setList(entries: string[]): Promise<void> {
    const multi = env.redis.multi().del(listKey());
    for (let i = 0; i < entries.length; i += 10_000) {
      multi.rpush(listKey(), ...entries.slice(i, i + 10_000));
    }
    await multi.exec();
  }

  async function batch(app: NestFastifyApplication, count: number): Promise<string[]> {
    const res = await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}&count=${count}`);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json; charset=utf-8');
    // The body is exactly what JSON.stringify gives (no spaces, decimal strings).
    const ids = res.json<{ ids: string[] }>().ids;
    expect(res.body).toBe(JSON.stringify({ ids }));
    return ids;
  }

  it.each([
    ['refill ahead on (LPOP + LLEN)', { QUEUE_REFILL_AHEAD: 'true' }],
    ['refill ahead off (plain LPOP)', { QUEUE_REFILL_AHEAD: 'false' }],
  ])('%s: batch after batch on a list with gaps and out-of-order runs', async (_name, extra) => {
    const app = await startApp(env.config(extra));
    const pops = countConnectionPops(app);
    try {
      const created = await request(app, 'POST', '/admin/apps', { body: { appId: APP, appName: 'batch-eq', step: 1000 } });
      expect([200, 201]).toContain(created.status);
      const entries = mixedList(6, 1123);
      const copy = `${listKey()}:old-path`;
      await setList(entries);
      await env.redis.del(copy);
      await env.redis.rpush(copy, ...entries);
      // Uneven batch sizes, so batches start and end inside runs.
      for (const count of [BATCH, 1, 999, 2, 1000, 500, 1000, 498]) {
        const expected = oldIds((await env.redis.lpopBuffer(copy, count)) ?? []);
        expect(expected).toHaveLength(count);
        const got = count === 1 ? [(await request(app, 'GET', `/api/id/${APP}?gatePass=${GATE_PASS}`)).body] : await batch(app, count);
        expect(got).toEqual(expected);
      }
      // Every pop went through the pop connection (pop-connection.ts): the seven batches and the single get.
      expect(pops.served).toBe(8);
      // Nothing else was taken from the hand-made part of the list.
      expect(await env.redis.lrange(listKey(), 0, 0)).toEqual(await env.redis.lrange(copy, 0, 0));
      await env.redis.del(copy);
    } finally {
      await app.close();
    }
  });

  it('drops malformed entries in place and fills the batch from the entries after them, as before', async () => {
    const app = await startApp(env.config());
    const pops = countConnectionPops(app);
    try {
      const good = mixedList(2, 77);
      // Malformed entries in the first batch: it is completed from the next entries of the list.
      const entries = [...good.slice(0, 10), 'abc', '', '-5', ...good.slice(10, 500), '1e3', ...good.slice(500)];
      await setList(entries);
      const first = await batch(app, BATCH);
      const second = await batch(app, BATCH - 4);
      expect([...first, ...second]).toEqual(oldIds(good.slice(0, 2 * BATCH - 4).map((g) => Buffer.from(g))));
      expect(pops.served).toBe(2);
    } finally {
      await app.close();
    }
  });
});
