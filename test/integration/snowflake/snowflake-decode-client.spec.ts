import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ShardleafClient, decodeQueueId, decodeSnowflakeId, shardOf } from '../../../packages/client/src';
import { DecodedId } from '../../../src/snowflake/core/snowflake-layout';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { QUIET_ENV, getIds } from './snowflake-harness';

/**
 * SNOWFLAKE_LAYOUT=js-safe end to end, and the client's decode checked against the server's decode
 * endpoint (snowflake, both layouts) and the server's own composition (queue IDs) on the same IDs.
 */
describe('js-safe snowflake IDs and decoding them in the client', () => {
  let env: TestEnv;
  const apps: NestFastifyApplication[] = [];

  beforeAll(async () => {
    env = await createTestEnv('sf_decode');
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await env.cleanup();
  });

  async function listening(extra: Record<string, string>): Promise<{ app: NestFastifyApplication; url: string }> {
    const app = await startApp(env.config({ ...QUIET_ENV, SNOWFLAKE_IP: '127.0.0.1', ...extra }));
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  }

  async function serverDecode(app: NestFastifyApplication, id: bigint | number): Promise<DecodedId> {
    const res = await request(app, 'GET', `/api/snowflake/decode/${id}`);
    expect(res.status).toBe(200);
    return res.json<DecodedId>();
  }

  it('js-safe: 100,000 IDs all below 2^53 and strictly increasing; the decode endpoint and the client read back worker id and time', async () => {
    const { app, url } = await listening({ SNOWFLAKE_LAYOUT: 'js-safe' });
    const before = Date.now();
    const ids: bigint[] = [];
    for (let i = 0; i < 100; i++) {
      ids.push(...(await getIds(app, 1000)));
    }
    const after = Date.now();
    expect(ids).toHaveLength(100_000);
    let increasing = 0;
    for (let i = 1; i < ids.length; i++) {
      if (ids[i] > ids[i - 1]) {
        increasing++;
      }
    }
    expect(increasing).toBe(ids.length - 1);
    expect(ids.every((id) => id > 0n && id < 2n ** 53n)).toBe(true);

    const workerId = (await serverDecode(app, ids[0])).workerId;
    expect(workerId).toBeLessThanOrEqual(31);
    for (const id of [ids[0], ids[49_999], ids[99_999]]) {
      const server = await serverDecode(app, id);
      expect(server.workerId).toBe(workerId);
      expect(server.timestamp).toBeGreaterThanOrEqual(before);
      expect(server.timestamp).toBeLessThanOrEqual(after);
      expect(decodeSnowflakeId(id, { layout: 'js-safe' })).toEqual(server);
    }
    // Above the layout: 400, not a wrong answer.
    const refused = await request(app, 'GET', `/api/snowflake/decode/${2n ** 53n}`);
    expect(refused.status).toBe(400);

    // The client's number forms: exact numbers, read back by its decode.
    const client = new ShardleafClient({ servers: url });
    try {
      const numbers = await client.snowflakeIdBatchNumbers('k', 1000);
      expect(numbers.every((n) => Number.isSafeInteger(n))).toBe(true);
      const n = await client.snowflakeIdNumber('k');
      const parts = decodeSnowflakeId(n, { layout: 'js-safe' });
      expect(parts).toEqual(await serverDecode(app, n));
      expect(parts.workerId).toBe(workerId);
      expect(parts.timestamp).toBeGreaterThanOrEqual(before);
    } finally {
      await client.close();
    }
  });

  it('leaf layout: the client decodes the IDs the client got as the server does; its number forms refuse them', async () => {
    const { app, url } = await listening({});
    const client = new ShardleafClient({ servers: url });
    try {
      const ids = await client.snowflakeIdBatch('k', 200);
      for (const id of ids.filter((_, i) => i % 20 === 0)) {
        expect(decodeSnowflakeId(id)).toEqual(await serverDecode(app, id));
      }
      await expect(client.snowflakeIdNumber('k')).rejects.toThrow(RangeError);
    } finally {
      await client.close();
    }
  });

  it('queue IDs: the client decodes the app and the shard of the gatePass the server put them on', async () => {
    const { app, url } = await listening({});
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 9, appName: 'decode', step: 100 } })).status).toBe(201);
    const client = new ShardleafClient({ servers: url });
    try {
      for (const gatePass of ['alice', 'bob', '+8613800138000', 'ü@example.org']) {
        const fromServer = await request(app, 'GET', `/api/id/9?gatePass=${encodeURIComponent(gatePass)}`, { token: null });
        const fromClient = await client.queueIdNumber(9, gatePass);
        for (const id of [BigInt(fromServer.body), BigInt(fromClient)]) {
          expect(decodeQueueId(id)).toMatchObject({ appId: 9, shard: shardOf(gatePass) });
          expect(decodeQueueId(id).index).toBeGreaterThan(0n);
        }
      }
    } finally {
      await client.close();
    }
  });
});
