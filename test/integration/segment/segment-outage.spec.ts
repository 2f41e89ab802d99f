import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TEST_MYSQL_URL, TestEnv, createTestEnv, expectError, request, startApp } from '../../support/test-env';
import { TcpProxy } from '../../support/tcp-proxy';
import { pollUntil } from '../../support/poll';
import { SEGMENT_TEST_ENV, bufferView, expectIncreasing } from './segment-test-helpers';

async function takeIds(app: NestFastifyApplication, tag: string, count: number): Promise<bigint[]> {
  const out: bigint[] = [];
  while (out.length < count) {
    const n = Math.min(1000, count - out.length);
    const res = await request(app, 'GET', `/api/segment/get/${tag}?count=${n}`);
    if (res.status !== 200) {
      throw new Error(`expected IDs, got ${res.status}: ${res.body}`);
    }
    out.push(...res.json<{ ids: string[] }>().ids.map((id) => BigInt(id)));
  }
  return out;
}

describe('segment IDs through a database outage', () => {
  let env: TestEnv;
  let proxy: TcpProxy;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segout');
    const server = new URL(TEST_MYSQL_URL);
    proxy = await TcpProxy.start(Number(server.port || 3306), server.hostname);
    const url = new URL(env.env.DATABASE_URL);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    app = await startApp(env.config({ ...SEGMENT_TEST_ENV, DATABASE_URL: url.toString(), SEGMENT_LOAD_TIMEOUT_MS: '3000' }));
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('out', 1, 100)");
  });

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await env?.cleanup();
  });

  it('serves what the buffers hold, then answers -3, then recovers by itself', async () => {
    const before = await takeIds(app, 'out', 20);
    const loaded = await pollUntil('the next segment', async () => {
      const view = await bufferView(app, 'out');
      return view?.nextReady ? view : undefined;
    });
    proxy.cut();

    const held =
      Number(BigInt(loaded.max0) - BigInt(loaded.value0)) + Number(BigInt(loaded.max1) - BigInt(loaded.value1));
    expect(held).toBe(180);
    const during = await takeIds(app, 'out', held);

    const refused = expectError(await request(app, 'GET', '/api/segment/get/out'), 503, -3);
    expect(refused.message).toContain('out');
    expectError(await request(app, 'GET', '/api/segment/get/out?count=2'), 503, -3);
    expect(await bufferView(app, 'out')).toMatchObject({ loading: false, nextReady: false });

    proxy.restore();
    const after = await pollUntil('recovery', async () => {
      const res = await request(app, 'GET', '/api/segment/get/out');
      if (res.status === 200) {
        return BigInt(res.body);
      }
      expectError(res, 503);
      return undefined;
    }, { intervalMs: 150 });
    const all = [...before, ...during, after];
    expectIncreasing(all);
    expect(all.slice(0, 200)).toEqual(Array.from({ length: 200 }, (_, i) => BigInt(i + 1)));
  });
});
