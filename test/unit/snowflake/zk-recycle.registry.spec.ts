import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { decodeNodeData, encodeNodeData } from '../../../src/snowflake/registries/zk-node-data';
import { ZkRecycleRegistry } from '../../../src/snowflake/registries/zk-recycle.registry';
import { InMemoryZookeeper } from './in-memory-zookeeper';
import { errorKindOfCall } from '../../support/error-kind';

const T = 1_763_769_600_000;
const LEASE = 10_000;
const MARGIN = 2_000;
const BASE = '/snowflake/t/recycle';

function registry(zk: InMemoryZookeeper, port: number, maxWorkerId = 1023): ZkRecycleRegistry {
  return new ZkRecycleRegistry({ zk: zk.asClient(), name: 't', ip: '10.0.0.1', port, leaseMs: LEASE, leaseMarginMs: MARGIN, maxWorkerId });
}

function pool(zk: InMemoryZookeeper, which: 'inuse' | 'notuse'): number[] {
  const prefix = `${BASE}/${which}/workId:`;
  return [...zk.nodes.keys()].filter((p) => p.startsWith(prefix)).map((p) => Number(p.slice(prefix.length)));
}

const kindOf = errorKindOfCall;

describe('ZkRecycleRegistry (in-memory ZooKeeper)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('creates exactly 1024 notuse ids once and moves one to inuse per instance', async () => {
    const zk = new InMemoryZookeeper();
    const a = (await registry(zk, 1).register(T)).workerId;
    const b = (await registry(zk, 2).register(T)).workerId;
    expect(a).not.toBe(b);
    expect(pool(zk, 'inuse').sort()).toEqual([a, b].sort());
    expect(pool(zk, 'notuse')).toHaveLength(1022);
    expect(pool(zk, 'notuse').every((id) => id >= 0 && id <= 1023)).toBe(true);
  });

  it('takes only ids of the layout (js-safe: 0..31) from the shared 1024-id pools', async () => {
    const zk = new InMemoryZookeeper();
    const ids: number[] = [];
    for (let port = 1; port <= 32; port++) {
      ids.push((await registry(zk, port, 31).register(T)).workerId);
    }
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    await expect(registry(zk, 33, 31).register(T)).rejects.toThrow(/no free worker id/);
    expect((await registry(zk, 34).register(T)).workerId).toBeGreaterThan(31);
  });

  it('never takes an id stamped ahead of its clock, and refuses when none is free', async () => {
    const zk = new InMemoryZookeeper();
    await registry(zk, 1).register(T);
    const stamp = encodeNodeData({ ip: '', port: '', timestamp: T + 60_000 });
    for (const id of pool(zk, 'notuse')) {
      if (id !== 77) {
        zk.nodes.set(`${BASE}/notuse/workId:${id}`, { data: stamp, version: 3 });
      }
    }
    expect((await registry(zk, 2).register(T)).workerId).toBe(77);
    await expect(registry(zk, 3).register(T)).rejects.toThrow(/no free worker id .* 1022 stamped ahead/);
  });

  it('stops serving after lease - margin without a report', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk, 1);
    await r.register(T);
    expect(kindOf(() => r.assertServing(T + LEASE - MARGIN))).toBeUndefined();
    expect(kindOf(() => r.assertServing(T + LEASE - MARGIN + 1))).toBe(ErrorKind.SnowflakeLeaseLost);
    await r.heartbeat(T + 5000);
    expect(kindOf(() => r.assertServing(T + 5000 + LEASE - MARGIN))).toBeUndefined();
  });

  it('a report that succeeded extends the lease even when reclaiming stale ids fails after it', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk, 1);
    await r.register(T);
    // ZooKeeper goes away between our report (getData + setData) and the reclaim scan (getChildren).
    jest.spyOn(zk, 'getChildren').mockRejectedValueOnce(new Error('ZooKeeper is down (in memory)'));
    const report = await r.heartbeat(T + 5000);
    expect(report.recordedUntil).toBe(T + 5000 + LEASE - MARGIN + 1);
    expect(kindOf(() => r.assertServing(T + 5000 + LEASE - MARGIN))).toBeUndefined();
  });

  it('reclaims stale ids, stamped with the old holder’s last time + lease', async () => {
    const zk = new InMemoryZookeeper();
    const dead = (await registry(zk, 1).register(T)).workerId;
    const alive = registry(zk, 2);
    await alive.register(T);
    await alive.heartbeat(T + LEASE); // exactly the lease: not yet stale
    expect(pool(zk, 'inuse')).toContain(dead);
    await alive.heartbeat(T + LEASE + 1);
    expect(pool(zk, 'inuse')).not.toContain(dead);
    const returned = decodeNodeData((await zk.getData(`${BASE}/notuse/workId:${dead}`))?.data ?? Buffer.alloc(0));
    expect(returned.timestamp).toBe(T + LEASE);
  });

  it('loses the lease when another instance reclaimed its id, and recovers with a fresh one', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk, 1);
    const first = (await r.register(T)).workerId;
    // Someone else reclaimed it and a third instance took it.
    zk.nodes.delete(`${BASE}/inuse/workId:${first}`);
    zk.nodes.set(`${BASE}/inuse/workId:${first}`, { data: encodeNodeData({ ip: '10.0.0.9', port: '9', timestamp: T, owner: 'other' }), version: 0 });
    const next = (await r.heartbeat(T + 100)).workerId;
    expect(next).not.toBe(first);
    expect(pool(zk, 'inuse').sort()).toEqual([first, next].sort());
    expect(decodeNodeData((await zk.getData(`${BASE}/inuse/workId:${first}`))?.data ?? Buffer.alloc(0)).owner).toBe('other');
    expect(kindOf(() => r.assertServing(T + 100))).toBeUndefined();
  });

  it('after a lost lease gives its old id back and takes a fresh one when ZooKeeper is back', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk, 1);
    const first = (await r.register(T)).workerId;
    zk.down = true;
    await expect(r.heartbeat(T + 3000)).rejects.toThrow(/down/);
    expect(kindOf(() => r.assertServing(T + LEASE))).toBe(ErrorKind.SnowflakeLeaseLost);
    zk.down = false;
    const next = (await r.heartbeat(T + LEASE)).workerId;
    expect(pool(zk, 'inuse')).toEqual([next]);
    expect(pool(zk, 'notuse')).toHaveLength(1023);
    if (next !== first) {
      expect(pool(zk, 'notuse')).toContain(first);
    }
    expect(kindOf(() => r.assertServing(T + LEASE))).toBeUndefined();
  });

  it('returns its id at once on release, stamped after its last ID', async () => {
    const zk = new InMemoryZookeeper();
    const r = registry(zk, 1);
    const id = (await r.register(T)).workerId;
    await r.release(T + 500);
    expect(pool(zk, 'inuse')).toEqual([]);
    const data = decodeNodeData((await zk.getData(`${BASE}/notuse/workId:${id}`))?.data ?? Buffer.alloc(0));
    expect(data.timestamp).toBe(T + 501);
  });

  it('refuses to start when ZooKeeper is unreachable', async () => {
    const zk = new InMemoryZookeeper();
    zk.down = true;
    await expect(registry(zk, 1).register(T)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeStartRefused });
  });
});
