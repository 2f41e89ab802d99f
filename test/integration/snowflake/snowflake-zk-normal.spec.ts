import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { ZookeeperClient } from '../../../src/infra/zookeeper/zookeeper-client';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, startApp } from '../../support/test-env';
import { ZookeeperServer } from './zookeeper-server';
import {
  QUIET_ENV,
  SHARED_ZK,
  removeTree,
  startRefusal,
  testZk,
  uniqueName,
  workerIdOf,
} from './snowflake-harness';

describe('snowflake zk_normal mode (Leaf forever nodes)', () => {
  let env: TestEnv;
  let zk: ZookeeperClient;
  let dir: string;
  let name: string;
  const config = (port: number, extra: Record<string, string> = {}) =>
    env.config({
      ...QUIET_ENV,
      SNOWFLAKE_MODE: 'zk_normal',
      ZK_ADDRESS: SHARED_ZK,
      ZK_CONNECT_TIMEOUT_MS: '1500',
      SNOWFLAKE_NAME: name,
      SNOWFLAKE_IP: '127.0.0.1',
      SNOWFLAKE_PORT: String(port),
      SNOWFLAKE_CACHE_DIR: dir,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      ...extra,
    });
  const forever = () => `/snowflake/${name}/forever`;
  const ownNodes = async (port: number) =>
    (await zk.getChildren(forever())).filter((c) => c.startsWith(`127.0.0.1:${port}-`));

  beforeAll(async () => {
    env = await createTestEnv('sf_zkn');
    zk = testZk(SHARED_ZK);
  });

  beforeEach(() => {
    name = uniqueName('zkn');
    dir = mkdtempSync(join(tmpdir(), 'shardleaf-zkn-'));
  });

  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    await removeTree(SHARED_ZK, `/snowflake/${name}`);
  });

  afterAll(async () => {
    await zk.close();
    await env.cleanup();
  });

  it('creates a sequential node per ip:port and reuses it across restarts', async () => {
    const a = await startApp(config(9001));
    const b = await startApp(config(9002));
    const workerA = await workerIdOf(a, DEFAULT_TWEPOCH);
    const workerB = await workerIdOf(b, DEFAULT_TWEPOCH);
    expect(workerA).not.toBe(workerB);
    await a.close();
    await b.close();
    const [node] = await ownNodes(9001);
    expect(Number(node.split('-')[1])).toBe(workerA);
    const data = JSON.parse(((await zk.getData(`${forever()}/${node}`))?.data ?? '').toString()) as Record<string, unknown>;
    expect(data).toMatchObject({ ip: '127.0.0.1', port: '9001' });
    expect(typeof data.timestamp).toBe('number');

    const again = await startApp(config(9001));
    expect(await workerIdOf(again, DEFAULT_TWEPOCH)).toBe(workerA);
    await again.close();
    expect(await ownNodes(9001)).toHaveLength(1);
  });

  it('reports its timestamp to the node every interval', async () => {
    const app = await startApp(config(9003, { SNOWFLAKE_REPORT_INTERVAL_MS: '100' }));
    const path = `${forever()}/${(await ownNodes(9003))[0]}`;
    await zk.setData(path, Buffer.from(JSON.stringify({ ip: '127.0.0.1', port: '9003', timestamp: 1 })));
    await pollUntil('a report', async () => {
      const node = await zk.getData(path);
      return (JSON.parse(node?.data.toString() ?? '{}') as { timestamp: number }).timestamp > 1;
    });
    await app.close();
  });

  it('refuses a start whose clock is behind the node, even with a good cache file', async () => {
    const app = await startApp(config(9004));
    await app.close();
    expect(readdirSync(dir).length).toBe(1); // the cache file is there and not behind
    const path = `${forever()}/${(await ownNodes(9004))[0]}`;
    await zk.setData(path, Buffer.from(JSON.stringify({ ip: '127.0.0.1', port: '9004', timestamp: Date.now() + 3_600_000 })));
    expect(await startRefusal(config(9004))).toMatch(/behind the time recorded in ZooKeeper node/);
  });

  describe('with ZooKeeper stopped', () => {
    let server: ZookeeperServer;

    beforeAll(async () => {
      server = await ZookeeperServer.create();
    });

    afterAll(async () => {
      await server.destroy();
    });

    it('starts from the cache file only when the clock is not behind it', async () => {
      const own = (extra: Record<string, string> = {}) => config(9005, { ZK_ADDRESS: server.address, ...extra });
      await server.start();
      const first = await startApp(own());
      const workerId = await workerIdOf(first, DEFAULT_TWEPOCH);
      await first.close();
      await server.stop();

      const fromCache = await startApp(own());
      expect(await workerIdOf(fromCache, DEFAULT_TWEPOCH)).toBe(workerId);
      await fromCache.close();

      const file = join(dir, readdirSync(dir)[0]);
      writeFileSync(file, JSON.stringify({ workerId, maxTimestamp: Date.now() + 3_600_000 }));
      expect(await startRefusal(own())).toMatch(/behind the time recorded in the cache file/);

      rmSync(file);
      expect(existsSync(file)).toBe(false);
      expect(await startRefusal(own())).toMatch(/ZooKeeper is unreachable .* no cache file/);
    });
  });
});
