import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { WorkerIdCacheFile } from '../../../src/snowflake/registries/worker-id-cache-file';
import { decodeNodeData, encodeNodeData } from '../../../src/snowflake/registries/zk-node-data';
import { ZkNormalRegistry } from '../../../src/snowflake/registries/zk-normal.registry';
import { InMemoryZookeeper } from './in-memory-zookeeper';

const T = 1_763_769_600_000;
const FOREVER = '/snowflake/t/forever';

describe('ZkNormalRegistry (in-memory ZooKeeper, cache file in a temp dir)', () => {
  let dir: string;
  let cache: WorkerIdCacheFile;

  const registry = (zk: InMemoryZookeeper, port = 8080) =>
    new ZkNormalRegistry({ zk: zk.asClient(), name: 't', ip: '10.0.0.1', port, cacheFile: cache });

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shardleaf-zkn-unit-'));
    cache = new WorkerIdCacheFile(join(dir, 'workId.json'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the sequence of a new forever node as worker id and caches it with the time', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 12;
    expect(await registry(zk).register(T)).toBe(12);
    expect(decodeNodeData((await zk.getData(`${FOREVER}/10.0.0.1:8080-0000000012`))?.data ?? Buffer.alloc(0))).toMatchObject({
      ip: '10.0.0.1',
      port: '8080',
      timestamp: T,
    });
    expect(await cache.read()).toEqual({ workerId: 12, maxTimestamp: T });
  });

  it('reuses the node of its ip:port and refuses a clock behind it', async () => {
    const zk = new InMemoryZookeeper();
    const first = await registry(zk).register(T);
    expect(await registry(zk).register(T + 10)).toBe(first);
    expect(await registry(zk, 9090).register(T + 10)).not.toBe(first);
    await expect(registry(zk).register(T + 5)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeStartRefused });
  });

  it('refuses a sequence above 1023', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 1024;
    await expect(registry(zk).register(T)).rejects.toThrow(/worker id 1024 .* outside 0\.\.1023/);
  });

  it('falls back to the cache file only while ZooKeeper is unreachable, and only with a clock not behind it', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 5;
    await registry(zk).register(T);
    zk.down = true;
    expect(await registry(zk).register(T + 1)).toBe(5);
    await cache.write({ workerId: 5, maxTimestamp: T + 100 });
    await expect(registry(zk).register(T + 50)).rejects.toThrow(/cache file/);
    rmSync(cache.path);
    await expect(registry(zk).register(T + 200)).rejects.toThrow(/no cache file/);
  });

  it('does not let a good cache file bypass a node ahead of the clock', async () => {
    const zk = new InMemoryZookeeper();
    await registry(zk).register(T);
    const [node] = await zk.getChildren(FOREVER);
    await zk.setData(`${FOREVER}/${node}`, encodeNodeData({ ip: '10.0.0.1', port: '8080', timestamp: T + 60_000 }));
    await expect(registry(zk).register(T + 1)).rejects.toThrow(/ZooKeeper node/);
  });

  it('reports the time to the node and the cache file, never lowering it', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk);
    await r.register(T);
    await r.heartbeat(T + 3000);
    await r.heartbeat(T + 2000);
    const [node] = await zk.getChildren(FOREVER);
    expect(decodeNodeData((await zk.getData(`${FOREVER}/${node}`))?.data ?? Buffer.alloc(0)).timestamp).toBe(T + 3000);
    expect((await cache.read())?.maxTimestamp).toBe(T + 3000);
  });
});
