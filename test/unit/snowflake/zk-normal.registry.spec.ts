import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { WorkerIdCacheFile } from '../../../src/snowflake/registries/worker-id-cache-file';
import { decodeNodeData, encodeNodeData } from '../../../src/snowflake/registries/zk-node-data';
import { ZkNormalRegistry } from '../../../src/snowflake/registries/zk-normal.registry';
import { Clock } from '../../../src/snowflake/core/clock';
import { FakeClock } from './fake-clock';
import { InMemoryZookeeper } from './in-memory-zookeeper';
import { ZookeeperUnavailableError } from '../../../src/infra/zookeeper/zookeeper-errors';

const T = 1_763_769_600_000;
const FOREVER = '/snowflake/t/forever';

describe('ZkNormalRegistry (in-memory ZooKeeper, cache file in a temp dir)', () => {
  let dir: string;
  let cache: WorkerIdCacheFile;
  const LIVENESS = 300;
  const ALLOWANCE = 50;

  const registry = (zk: InMemoryZookeeper, port = 8080, clock: Clock = new FakeClock(T)) =>
    new ZkNormalRegistry({
      zk: zk.asClient(),
      name: 't',
      ip: '10.0.0.1',
      port,
      cacheFile: cache,
      livenessMs: LIVENESS,
      startAllowanceMs: ALLOWANCE,
      clock,
      maxWorkerId: 1023,
    });
  const nodeTime = async (zk: InMemoryZookeeper): Promise<number> => {
    const [node] = await zk.getChildren(FOREVER);
    return decodeNodeData((await zk.getData(`${FOREVER}/${node}`))?.data ?? Buffer.alloc(0)).timestamp;
  };

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

  it('takes the sequence of a new forever node as worker id; a report records the time ahead in the node and the cache file', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 12;
    const r = registry(zk);
    expect(await r.register(T)).toEqual({ workerId: 12, recordedUntil: 0 });
    expect(await r.heartbeat(T, T + 300)).toEqual({ workerId: 12, recordedUntil: T + 300 });
    expect(decodeNodeData((await zk.getData(`${FOREVER}/10.0.0.1:8080-0000000012`))?.data ?? Buffer.alloc(0))).toMatchObject({
      ip: '10.0.0.1',
      port: '8080',
      timestamp: T + 300,
    });
    expect(await cache.read()).toEqual({ workerId: 12, maxTimestamp: T + 300 });
    await r.heartbeat(T + 1, T + 200); // never lowered
    expect(await nodeTime(zk)).toBe(T + 300);
  });

  it('reuses the node of its ip:port; after a graceful stop the exact last time, after a crash the time recorded ahead (waited out within the allowance, refused beyond)', async () => {
    const zk = new InMemoryZookeeper();
    const first = registry(zk);
    const { workerId } = await first.register(T);
    await first.heartbeat(T, T + 1000);
    await first.release(T + 10);
    expect(await nodeTime(zk)).toBe(T + 10);
    expect((await cache.read())?.maxTimestamp).toBe(T + 10);
    const second = registry(zk);
    expect(await second.register(T + 20)).toEqual({ workerId, recordedUntil: T + 10 });
    expect((await registry(zk, 9090).register(T + 20)).workerId).not.toBe(workerId);
    await second.heartbeat(T + 20, T + 60); // then crashes: no release
    const third = registry(zk);
    expect(await third.register(T + 20)).toEqual({ workerId, recordedUntil: T + 60 });
    await third.heartbeat(T + 400, T + 5000); // then crashes too; a restart far behind is refused
    await expect(registry(zk).register(T + 400)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeStartRefused });
    // The refused start freed the live node: a corrected start takes it without waiting.
    const clock = new FakeClock(T);
    expect(await registry(zk, 8080, clock).register(T + 5000)).toEqual({ workerId, recordedUntil: T + 5000 });
    expect(clock.time).toBe(T);
  });

  it('refuses a second live instance with the same ip:port (its live node changes while the start waits)', async () => {
    const zk = new InMemoryZookeeper();
    const live = registry(zk);
    await live.register(T);
    await live.heartbeat(T, T + 1000);
    const clock = new FakeClock(T);
    const sleep = clock.sleep.bind(clock);
    clock.sleep = async (ms) => {
      await sleep(ms);
      await live.heartbeat(clock.time, clock.time + 1000); // the live one reports meanwhile
    };
    await expect(registry(zk, 8080, clock).register(T)).rejects.toThrow(
      /another live instance reported as 10\.0\.0\.1:8080 .* unique SNOWFLAKE_IP:SNOWFLAKE_PORT/,
    );
    expect(live.assertServing()).toBeUndefined();
  });

  it('takes over the live node of a silent (crashed) predecessor after the liveness window; the predecessor then stops', async () => {
    const zk = new InMemoryZookeeper();
    const old = registry(zk);
    const { workerId } = await old.register(T);
    await old.heartbeat(T, T + 40);
    const clock = new FakeClock(T);
    const next = registry(zk, 8080, clock);
    expect(await next.register(T)).toEqual({ workerId, recordedUntil: T + 40 });
    expect(clock.time - T).toBeGreaterThanOrEqual(LIVENESS);
    await expect(old.heartbeat(T + 1, T + 1000)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeLeaseLost });
    expect(() => old.assertServing()).toThrow(/taken over/);
    expect(await nodeTime(zk)).toBe(T + 40);
  });

  it('a holder that was taken over writes nothing at its release (the time goes with the ownership check)', async () => {
    const zk = new InMemoryZookeeper();
    const old = registry(zk);
    await old.register(T);
    await old.heartbeat(T, T + 40);
    const next = registry(zk, 8080, new FakeClock(T));
    await next.register(T);
    await next.heartbeat(T + 400, T + 1000);
    // The old holder comes back and stops gracefully before any heartbeat told it it was replaced.
    await expect(old.release(T + 5)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeLeaseLost });
    expect(await nodeTime(zk)).toBe(T + 1000);
    expect((await cache.read())?.maxTimestamp).toBe(T + 1000);
  });

  it('a report whose reply was lost after ZooKeeper applied it does not make the holder think it was taken over', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk);
    await r.register(T);
    await r.heartbeat(T, T + 100);
    const multi = zk.multi.bind(zk);
    zk.multi = async (ops) => {
      zk.multi = multi;
      await multi(ops); // applied, then the connection drops before the reply
      throw new ZookeeperUnavailableError('connection lost');
    };
    await expect(r.heartbeat(T + 10, T + 200)).rejects.toThrow(/connection lost/);
    expect(await r.heartbeat(T + 20, T + 300)).toMatchObject({ recordedUntil: T + 300 });
    expect(r.assertServing()).toBeUndefined();
    await r.release(T + 25);
    expect(await nodeTime(zk)).toBe(T + 25);
  });

  it('does not fall back to the cache file when ZooKeeper goes away while another live instance holds the identity', async () => {
    const zk = new InMemoryZookeeper();
    const live = registry(zk);
    await live.register(T);
    await live.heartbeat(T, T + 10); // the cache file now names its worker id
    const clock = new FakeClock(T + 20);
    clock.sleep = async () => {
      zk.down = true;
    };
    await expect(registry(zk, 8080, clock).register(T + 20)).rejects.toMatchObject({
      kind: ErrorKind.SnowflakeStartRefused,
      message: expect.stringMatching(/not falling back to the cache file/),
    });
  });

  it('refuses a sequence above 1023', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 1024;
    await expect(registry(zk).register(T)).rejects.toThrow(/worker id 1024 .* outside 0\.\.1023/);
  });

  it('falls back to the cache file only while ZooKeeper is unreachable, and only with a clock not behind it beyond the allowance', async () => {
    const zk = new InMemoryZookeeper();
    zk.sequence = 5;
    const r = registry(zk);
    await r.register(T);
    await r.heartbeat(T, T + 1);
    zk.down = true;
    expect(await registry(zk).register(T + 1)).toEqual({ workerId: 5, recordedUntil: T + 1 });
    await cache.write({ workerId: 5, maxTimestamp: T + 100 });
    await expect(registry(zk).register(T + 49)).rejects.toThrow(/cache file/);
    rmSync(cache.path);
    await expect(registry(zk).register(T + 200)).rejects.toThrow(/no cache file/);
  });

  it('does not let a good cache file bypass a node ahead of the clock, nor a node a cache file ahead', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk);
    await r.register(T);
    await r.release(T);
    const [node] = await zk.getChildren(FOREVER);
    await zk.setData(`${FOREVER}/${node}`, encodeNodeData({ ip: '10.0.0.1', port: '8080', timestamp: T + 60_000 }));
    await expect(registry(zk).register(T + 1)).rejects.toThrow(/ZooKeeper node/);
    await zk.setData(`${FOREVER}/${node}`, encodeNodeData({ ip: '10.0.0.1', port: '8080', timestamp: T }));
    const cached = await cache.read();
    await cache.write({ workerId: cached?.workerId ?? -1, maxTimestamp: T + 30 });
    expect((await registry(zk).register(T + 1)).recordedUntil).toBe(T + 30);
  });
});
