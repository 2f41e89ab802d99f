import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SegmentService } from '../../../src/segment/segment.service';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { pollUntil } from '../../support/poll';
import { SEGMENT_TEST_ENV, expectIncreasing, expectUnique } from './segment-test-helpers';

/** Small steps so that the runs below switch segments many times. */
const ENV = { ...SEGMENT_TEST_ENV, SEGMENT_MAX_STEP: '8000' };

/**
 * `workers` concurrent callers, each taking IDs in calls of 1..`maxBatch` until `total` are out.
 * Returns each caller's IDs in the order it received them.
 */
async function drain(service: SegmentService, tag: string, total: number, workers: number, maxBatch: number) {
  let remaining = total;
  const perWorker: bigint[][] = [];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const mine: bigint[] = [];
      perWorker.push(mine);
      let call = 0;
      while (remaining > 0) {
        const n = Math.min(remaining, call % 3 === 0 ? 1 : 1 + ((w * 7 + call * 13) % maxBatch));
        remaining -= n;
        call++;
        const ids = await service.get(tag, n);
        if (ids.length !== n) {
          throw new Error(`asked for ${n} IDs, got ${ids.length}`);
        }
        mine.push(...ids);
      }
    }),
  );
  return perWorker;
}

describe('segment IDs under concurrency', () => {
  let env: TestEnv;
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segconc');
    a = await startApp(env.config(ENV));
    b = await startApp(env.config(ENV));
    await env.sql(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hot', 1, 1000), ('shared', 1, 500)",
    );
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await env?.cleanup();
  });

  it('hands out 500k IDs of one tag across many segment switches: unique, increasing per caller', async () => {
    const service = a.get(SegmentService);
    const perWorker = await drain(service, 'hot', 500_000, 200, 100);
    for (const ids of perWorker) {
      expectIncreasing(ids);
    }
    const all = perWorker.flat();
    expect(expectUnique(all)).toBe(500_000);
    const rows = (await env.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'hot'")) as Array<{ max_id: string }>;
    const maxId = BigInt(rows[0].max_id);
    expect(all.every((id) => id >= 1n && id < maxId)).toBe(true);
    // The step doubled up to SEGMENT_MAX_STEP (1000, 2000, 4000, 8000): some sixty segments.
    const view = (await request(a, 'GET', '/admin/segment/tags/hot')).json<{ buffer: { step: number } }>();
    expect(view.buffer.step).toBe(8000);
  });

  it('keeps IDs unique across two instances on one tag, each increasing in its own order', async () => {
    const [fromA, fromB] = await Promise.all([
      drain(a.get(SegmentService), 'shared', 100_000, 50, 50),
      drain(b.get(SegmentService), 'shared', 100_000, 50, 50),
    ]);
    for (const ids of [...fromA, ...fromB]) {
      expectIncreasing(ids);
    }
    expect(expectUnique([...fromA.flat(), ...fromB.flat()])).toBe(200_000);
  });

  it('lets a tag created on one instance be served by the other at once', async () => {
    const created = await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'fresh', step: 10 } });
    expect(created.status).toBe(201);
    // b re-reads the tags on a miss, at most once a second.
    const first = await pollUntil('instance b to see the tag', async () => {
      const res = await request(b, 'GET', '/api/segment/get/fresh');
      return res.status === 200 ? res.body : undefined;
    });
    expect(first).toBe('1');
    expect((await request(a, 'GET', '/api/segment/get/fresh')).body).toBe('11');
  });
});
