import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';
import { SEGMENT_TEST_ENV, expectUnique } from './segment-test-helpers';

/** Issue #3 (segment part): a deleted tag re-created through the admin API never reissues an ID. */
describe('segment tag deleted and re-created', () => {
  let env: TestEnv;
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segrecreate');
    // Two instances on one database; tag sync is off, so b keeps its buffers across a's admin changes.
    a = await startApp(env.config(SEGMENT_TEST_ENV));
    b = await startApp(env.config(SEGMENT_TEST_ENV));
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await env?.cleanup();
  });

  async function ids(app: NestFastifyApplication, tag: string, count: number): Promise<bigint[]> {
    const res = await request(app, 'GET', `/api/segment/get/${tag}?count=${count}`, { token: null });
    if (res.status !== 200) {
      throw new Error(`GET ${tag}: ${res.status} ${res.body}`);
    }
    return res.json<{ ids: string[] }>().ids.map(BigInt);
  }

  async function row(tag: string): Promise<{ leaf?: string; retired?: string }> {
    const leaf = (await env.sql('SELECT max_id FROM leaf_alloc WHERE biz_tag = ?', [tag])) as Array<{ max_id: string }>;
    const retired = (await env.sql('SELECT max_id FROM leaf_alloc_retired WHERE biz_tag = ?', [tag])) as Array<{
      max_id: string;
    }>;
    return { leaf: leaf[0]?.max_id, retired: retired[0]?.max_id };
  }

  it('re-created with the default maxId, the tag resumes above every ID issued before the delete', async () => {
    expect((await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'reborn', step: 5 } })).status).toBe(201);
    const before = [...(await ids(a, 'reborn', 3)), ...(await ids(b, 'reborn', 7)), ...(await ids(a, 'reborn', 4))];
    expectUnique(before);
    const highest = before.reduce((m, id) => (id > m ? id : m));

    expect((await request(a, 'DELETE', '/admin/segment/tags/reborn')).json()).toEqual({ tag: 'reborn', deleted: true });
    const recreated = await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'reborn', step: 5 } });
    expect(recreated.status).toBe(201);
    expect(BigInt(recreated.json<{ maxId: string }>().maxId)).toBeGreaterThan(highest);

    const after = await ids(a, 'reborn', 5);
    expect(after.every((id) => id > highest)).toBe(true);
    // b never saw the delete (no sync): its buffered IDs were its own range, below the retired max_id.
    const fromB = await ids(b, 'reborn', 5);
    expectUnique([...before, ...after, ...fromB, ...(await ids(a, 'reborn', 12))]);
  });

  it('refuses an explicit maxId below the retired one, and writes nothing', async () => {
    expect((await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'low', step: 10 } })).status).toBe(201);
    const before = await ids(a, 'low', 15);
    expect((await request(a, 'DELETE', '/admin/segment/tags/low')).status).toBe(200);
    const retired = (await row('low')).retired as string;
    expect(BigInt(retired)).toBeGreaterThan(before[before.length - 1]);

    const refused = expectError(
      await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'low', step: 10, maxId: 1 } }),
      409,
      -105,
    );
    expect(refused.message).toBe(`tag 'low' was deleted at max_id ${retired}; create it with maxId ≥ ${retired} or omit maxId`);
    expect(await row('low')).toEqual({ leaf: undefined, retired });

    const atRetired = await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'low', step: 10, maxId: retired } });
    expect(atRetired.status).toBe(201);
    expect((await ids(a, 'low', 1))[0]).toBe(BigInt(retired));
  });

  it('is safe when each admin call is executed twice', async () => {
    expect((await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'twice', step: 4 } })).status).toBe(201);
    await ids(a, 'twice', 6);
    expect((await request(a, 'DELETE', '/admin/segment/tags/twice')).status).toBe(200);
    const first = await row('twice');
    const again = expectError(await request(a, 'DELETE', '/admin/segment/tags/twice'), 404, -106);
    expect(again.message).toContain(`deleted at max_id ${first.retired}`);
    expect(await row('twice')).toEqual(first);

    const created = await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'twice', step: 4 } });
    const resent = await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'twice', step: 4 } });
    expect([created.status, resent.status]).toEqual([201, 200]);
    expect(resent.json<{ maxId: string }>().maxId).toBe(first.retired);

    // A second life and a second delete: the tombstone only grows.
    const second = await ids(a, 'twice', 9);
    expect(second[0]).toBe(BigInt(first.retired as string));
    expect((await request(a, 'DELETE', '/admin/segment/tags/twice')).status).toBe(200);
    expect(BigInt((await row('twice')).retired as string)).toBeGreaterThan(second[second.length - 1]);
  });

  it('keeps the tombstone ahead of the row when deletes and creates race', async () => {
    expect((await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'race', step: 3 } })).status).toBe(201);
    const seen: bigint[] = [];
    for (let round = 0; round < 15; round++) {
      const [got, del, create] = await Promise.all([
        request(b, 'GET', '/api/segment/get/race?count=2', { token: null }),
        request(a, 'DELETE', '/admin/segment/tags/race'),
        request(b, 'POST', '/admin/segment/tags', { body: { tag: 'race', step: 3 } }),
      ]);
      expect([200, 404]).toContain(del.status);
      expect([200, 201, 409]).toContain(create.status);
      expect([200, 404, 503]).toContain(got.status);
      if (got.status === 200) {
        seen.push(...got.json<{ ids: string[] }>().ids.map(BigInt));
      }
      const state = await row('race');
      if (state.leaf !== undefined && state.retired !== undefined) {
        expect(BigInt(state.leaf)).toBeGreaterThanOrEqual(BigInt(state.retired));
      }
      if ((await request(a, 'POST', '/admin/segment/tags', { body: { tag: 'race', step: 3 } })).status === 201) {
        expect(BigInt((await row('race')).leaf as string)).toBeGreaterThanOrEqual(BigInt(state.retired ?? '1'));
      }
      seen.push(...(await ids(a, 'race', 2)));
    }
    expectUnique(seen);
  });
});
