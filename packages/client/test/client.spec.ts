import { ShardleafClosedError, ShardleafError } from '../src/errors';
import { shardOf } from '../src/java-hash';
import { FakeClock, FakeServers, flush } from './fakes';
import { A, B, testClient } from './test-client';

describe('ShardleafClient against a fake server', () => {
  it('composes queue IDs of the gatePass shard, computed locally with the shared Java hash', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(1, 'alice', 3);
    const shard = shardOf('alice');
    expect(ids).toEqual([1n, 2n, 3n].map((i) => (i << 14n) | BigInt((shard << 8) | 1)));
    expect(servers.calls[0]).toMatchObject({ method: 'POST', path: '/api/id/1/lease', count: 10 });
    // Another gatePass of another shard has a buffer of its own.
    const bob = await c.queueId(1, 'bob');
    expect(bob & 0x3fffn).toBe(BigInt((shardOf('bob') << 8) | 1));
    expect(await c.queueIdString(1, 'alice')).toBe(String((4n << 14n) | BigInt((shard << 8) | 1)));
    await c.close();
  });

  it('takes queue leases bigger than asked (whole steps) and hands out every index of them', async () => {
    const servers = new FakeServers();
    servers.queueStep = 25;
    const c = testClient(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(2, 'x', 60);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 60 }, (_, i) => BigInt(i + 1)));
    await c.close();
  });

  it('never returns an ID twice, within a client or across two clients of the same servers', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c1 = testClient(servers, clock);
    const c2 = testClient(servers, clock);
    const seen = new Set<bigint>();
    let total = 0;
    for (let round = 0; round < 200; round++) {
      const batch = await Promise.all([
        c1.segmentIdBatch('orders', 37),
        c2.segmentIdBatch('orders', 41),
        c1.segmentId('orders').then((id) => [id]),
        c2.queueIdBatch(1, 'alice', 13),
        c1.queueIdBatch(1, 'alice', 17),
        c1.snowflakeIdBatch('default', 5),
        c2.snowflakeId().then((id) => [id]),
      ]);
      for (const ids of batch) {
        for (const id of ids) {
          seen.add(id);
          total++;
        }
      }
      clock.advance(10);
    }
    expect(seen.size).toBe(total);
    await Promise.all([c1.close(), c2.close()]);
  });

  it('close() aborts the fetch in flight, fails its waiters and leaves no timer behind', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'hang');
    const c = testClient(servers, clock);
    const p = c.segmentId('orders');
    await flush();
    expect(clock.pendingTimers).toBe(1);
    await c.close();
    await expect(p).rejects.toBeInstanceOf(ShardleafClosedError);
    expect(clock.pendingTimers).toBe(0);
    await expect(c.segmentId('orders')).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(c.segmentId('users')).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(c.queueIdBatch(1, 'alice', 2)).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(c.snowflakeId()).rejects.toBeInstanceOf(ShardleafClosedError);
    // The synchronous try* methods throw (documented).
    expect(() => c.trySegmentId('orders')).toThrow(ShardleafClosedError);
    expect(() => c.tryQueueId(1, 'alice')).toThrow(ShardleafClosedError);
  });

  it('after close(), the queue pair used just before is refused too (no remembered buffer survives)', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = testClient(servers, clock);
    const first = await c.queueId(1, 'alice');
    expect(c.tryQueueId(1, 'alice')).toBeGreaterThan(first);
    await c.close();
    await expect(c.queueId(1, 'alice')).rejects.toBeInstanceOf(ShardleafClosedError);
    expect(() => c.tryQueueId(1, 'alice')).toThrow(ShardleafClosedError);
  });

  it('a remembered queue pair does not hide bad input or another pair', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = testClient(servers, clock);
    const a = await c.queueId(1, 'alice');
    await expect(c.queueId(1.5, 'alice')).rejects.toBeInstanceOf(RangeError);
    expect(() => c.tryQueueId(1, '')).toThrow(RangeError);
    const b = await c.queueId(2, 'alice');
    expect(b & 0xffn).toBe(2n);
    expect((await c.queueId(1, 'alice')) & 0xffn).toBe(1n);
    expect(a & 0xffn).toBe(1n);
    await c.close();
  });

  it('prefetches in the background: callers do not wait while the next lease is fetched', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = testClient(servers, clock, { servers: A });
    await c.segmentIdBatch('orders', 1); // lease 1: 10 IDs
    servers.mode(A, 'manual');
    expect(await c.segmentIdBatch('orders', 7)).toHaveLength(7); // 8 of 10 used: lease 2 requested
    expect(servers.heldCount).toBe(1);
    // The last 2 IDs come at once, the fetch still held.
    expect(c.trySegmentId('orders')).toBe(9n);
    expect(c.trySegmentId('orders')).toBe(10n);
    expect(c.trySegmentId('orders')).toBeUndefined();
    expect(servers.heldCount).toBe(1);
    servers.release();
    await flush();
    expect(c.trySegmentId('orders')).toBe(11n);
    await c.close();
  });

  it('number(key) and numbers(key, n): one call per number or per batch of up to 1000, failover included', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock());
    expect(await c.number('ORD')).toBe('ORD-1');
    servers.mode(B, '503');
    const many = await c.numbers('ORD', 2500);
    expect(many).toHaveLength(2500);
    expect(many[0]).toBe('ORD-2');
    expect(new Set(many).size).toBe(2500);
    expect(servers.calls.filter((call) => call.path === '/api/number/ORD' && call.server !== B).map((call) => call.count)).toEqual([1, 1000, 1000, 500]);
    await expect(c.number('NOPE')).rejects.toMatchObject({ status: 404, error: 'NUMBER_FORMAT_NOT_FOUND' });
    await c.close();
    await expect(c.number('ORD')).rejects.toBeInstanceOf(ShardleafClosedError);
  });

  it('hands out no held queue ID once the shard answers 410 (max_limit_id lowered below the leased range)', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { servers: A });
    const shard = BigInt(shardOf('alice') << 8) | 1n;
    expect(await c.queueId(1, 'alice')).toBe((1n << 14n) | shard); // lease 1: indexes 1..10
    // The limit drops to index 5: the server now drops such IDs; the next lease answers 410.
    servers.queueMaxLimitId = (5n << 14n) | shard;
    // Held before the client could know (the documented exposure): up to the prefetch at 80 %.
    const held = await c.queueIdBatch(1, 'alice', 7);
    expect(held.map((id) => id >> 14n)).toEqual([2n, 3n, 4n, 5n, 6n, 7n, 8n]);
    await flush();
    // The prefetch got 410: indexes 9 and 10 are never handed out; try* says why, once.
    expect(() => c.tryQueueId(1, 'alice')).toThrow(ShardleafError);
    expect(c.lastQueueFailure(1, 'alice')).toMatchObject({ status: 410, error: 'QUEUE_EXHAUSTED' });
    expect(c.tryQueueId(1, 'alice')).toBeUndefined();
    await expect(c.queueId(1, 'alice')).rejects.toMatchObject({ status: 410, error: 'QUEUE_EXHAUSTED' });
    // Raised again: leases resume above every index leased before.
    servers.queueMaxLimitId = 0n;
    expect((await c.queueId(1, 'alice')) >> 14n).toBe(11n);
    await c.close();
  });

  it('never hands out a queue ID above the maxLimitId a lease reports', async () => {
    const servers = new FakeServers();
    servers.queueStep = 10;
    const shard = BigInt(shardOf('alice') << 8) | 1n;
    servers.queueMaxLimitId = (14n << 14n) | shard;
    const c = testClient(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(1, 'alice', 14);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 14 }, (_, i) => BigInt(i + 1)));
    expect(ids.every((id) => id <= servers.queueMaxLimitId)).toBe(true);
    await expect(c.queueId(1, 'alice')).rejects.toMatchObject({ status: 410 });
    await c.close();
  });

  it('drops a lease older than leaseTtlMs and fetches a new one', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = testClient(servers, clock, { servers: A, leaseTtlMs: 5000 });
    expect(await c.segmentIdBatch('orders', 2)).toEqual([1n, 2n]); // lease 1..10
    clock.advance(4999);
    expect(await c.segmentId('orders')).toBe(3n);
    clock.advance(1);
    // 3..10 were leased 5 s ago: a gap; the next ID comes from a new lease.
    expect(await c.segmentId('orders')).toBe(11n);
    expect(c.trySegmentId('orders')).toBe(12n);
    expect(servers.calls).toHaveLength(2);
    await c.close();
  });
});
