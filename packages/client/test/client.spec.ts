import { ShardleafClient, ShardleafClientOptions } from '../src/client';
import { ShardleafClosedError, ShardleafError, ShardleafUnavailableError } from '../src/errors';
import { shardOf } from '../src/java-hash';
import { Transport } from '../src/transport';
import { FakeClock, FakeServers, flush } from './fakes';

const A = 'http://a:1';
const B = 'http://b:1';
const C = 'http://c:1';

function client(servers: FakeServers, clock: FakeClock, over: Partial<ShardleafClientOptions> = {}): ShardleafClient {
  return new ShardleafClient({
    servers: [A, B, C],
    fetch: servers.fetch,
    clock,
    timeoutMs: 1000,
    initialLease: 10,
    minLease: 10,
    maxLease: 1000,
    backoffBaseMs: 100,
    backoffMaxMs: 800,
    ...over,
  });
}

describe('ShardleafClient against a fake server', () => {
  it('composes queue IDs of the gatePass shard, computed locally with the shared Java hash', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock(), { servers: A });
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
    const c = client(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(2, 'x', 60);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 60 }, (_, i) => BigInt(i + 1)));
    await c.close();
  });

  it('never returns an ID twice, within a client or across two clients of the same servers', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c1 = client(servers, clock);
    const c2 = client(servers, clock);
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

  it('goes round robin over the servers', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock(), { prefetchAt: 1 });
    for (const tag of ['orders', 'users']) {
      await c.segmentIdBatch(tag, 30);
    }
    expect(servers.calls.map((x) => x.server)).toEqual([A, B, C, A, B, C]);
    await c.close();
  });

  it('skips a failing server, and tries it again only after its (doubling) backoff', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'down');
    const t = new Transport({ servers: [A, B], timeoutMs: 1000, backoffBaseMs: 100, backoffMaxMs: 800, clock, fetch: servers.fetch });
    const lease = () => t.request('POST', '/api/segment/lease/orders?count=1');
    const order = async (n: number): Promise<string[]> => {
      servers.calls.length = 0;
      for (let i = 0; i < n; i++) {
        await lease();
      }
      return servers.calls.map((x) => x.server);
    };
    expect(await order(1)).toEqual([A, B]); // A fails, B answers
    expect(t.servers()[0]).toMatchObject({ url: A, failures: 1, backingOff: true });
    expect(await order(4)).toEqual([B, B, B, B]);
    clock.advance(100);
    // Round robin again: A is tried once (still down: 200 ms now), B answers every call.
    expect((await order(2)).filter((s) => s === A)).toEqual([A]);
    expect(t.servers()[0]).toMatchObject({ failures: 2, backingOff: true });
    clock.advance(199);
    expect(await order(2)).toEqual([B, B]);
    servers.mode(A, 'ok');
    clock.advance(1);
    expect((await order(2)).sort()).toEqual([A, B]);
    expect(t.servers()[0]).toMatchObject({ failures: 0, backingOff: false });
    // Backoff doubles up to backoffMaxMs.
    servers.mode(A, 'down');
    for (let i = 0; i < 6; i++) {
      expect((await order(2)).filter((s) => s === A)).toEqual([A]);
      clock.advance(800);
    }
    // 100, 200, 400, 800, 800, …: after 800 ms A is always due again.
    expect(t.servers()[0]).toMatchObject({ failures: 6, backingOff: false });
  });

  it('tries the server due first when every server is backing off', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'down');
    servers.mode(B, 'down');
    const t = new Transport({ servers: [A, B], timeoutMs: 1000, backoffBaseMs: 100, backoffMaxMs: 800, clock, fetch: servers.fetch });
    await expect(t.request('POST', '/api/segment/lease/orders?count=1')).rejects.toBeInstanceOf(ShardleafUnavailableError);
    servers.mode(B, 'ok');
    servers.calls.length = 0;
    // Both back off (A since t, B since t): A is due first, fails again; the call ends there.
    await expect(t.request('POST', '/api/segment/lease/orders?count=1')).rejects.toBeInstanceOf(ShardleafUnavailableError);
    expect(servers.calls.map((x) => x.server)).toEqual([A]);
    servers.calls.length = 0;
    await t.request('POST', '/api/segment/lease/orders?count=1');
    expect(servers.calls.map((x) => x.server)).toEqual([B]);
  });

  it('retries a 503 on another server', async () => {
    const servers = new FakeServers();
    servers.mode(A, '503');
    servers.mode(B, '503');
    const c = client(servers, new FakeClock());
    expect(await c.segmentIdBatch('orders', 2)).toEqual([1n, 2n]);
    expect(servers.calls.map((x) => x.server)).toEqual([A, B, C]);
    await c.close();
  });

  it('throws a ShardleafUnavailableError naming every attempt when no server answers', async () => {
    const servers = new FakeServers();
    for (const s of [A, B, C]) {
      servers.mode(s, '503');
    }
    const c = client(servers, new FakeClock());
    const err = await c.segmentId('orders').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardleafUnavailableError);
    expect((err as ShardleafUnavailableError).failures).toHaveLength(3);
    expect((err as Error).message).toContain('HTTP 503');
    await c.close();
  });

  it('throws a 4xx as a typed ShardleafError with the server body, without asking another server', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock());
    const err = await c.segmentId('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardleafError);
    expect(err).toMatchObject({ status: 404, code: -2, error: 'SEGMENT_KEY_NOT_FOUND', message: "biz_tag 'nope' is not in leaf_alloc" });
    expect(servers.calls).toHaveLength(1);
    const gone = await c.queueId(9, 'alice').catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 404, code: -2, error: 'QUEUE_APP_NOT_FOUND' });
    await c.close();
  });

  it('answers 410 QUEUE_EXHAUSTED as a ShardleafError after the last leased ID', async () => {
    const servers = new FakeServers();
    servers.queueMaxIndex = 15n;
    const c = client(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(1, 'alice', 15);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 15 }, (_, i) => BigInt(i + 1)));
    await expect(c.queueId(1, 'alice')).rejects.toMatchObject({ status: 410, code: -5, error: 'QUEUE_EXHAUSTED' });
    await c.close();
  });

  it('times out a call that hangs and goes on to the next server', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'hang');
    const c = client(servers, clock);
    const p = c.segmentId('orders');
    await flush();
    expect(servers.calls.map((x) => x.server)).toEqual([A]);
    clock.advance(999);
    await flush();
    expect(servers.calls).toHaveLength(1);
    clock.advance(1);
    expect(await p).toBe(1n);
    expect(servers.calls.map((x) => x.server)).toEqual([A, B]);
    await c.close();
  });

  it('close() aborts the fetch in flight, fails its waiters and leaves no timer behind', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'hang');
    const c = client(servers, clock);
    const p = c.segmentId('orders');
    await flush();
    expect(clock.pendingTimers).toBe(1);
    await c.close();
    await expect(p).rejects.toBeInstanceOf(ShardleafClosedError);
    expect(clock.pendingTimers).toBe(0);
    await expect(c.segmentId('orders')).rejects.toBeInstanceOf(ShardleafClosedError);
    expect(() => c.segmentId('users')).toThrow(ShardleafClosedError);
  });

  it('prefetches in the background: callers do not wait while the next lease is fetched', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = client(servers, clock, { servers: A });
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

  it('validates its arguments locally', async () => {
    const c = client(new FakeServers(), new FakeClock());
    expect(() => c.queueId(256, 'a')).toThrow(RangeError);
    expect(() => c.queueId(1, '')).toThrow(TypeError);
    expect(() => c.segmentIdBatch('orders', 0)).toThrow(RangeError);
    expect(() => new ShardleafClient({ servers: [] })).toThrow(RangeError);
    expect(() => new ShardleafClient({ servers: A, timeoutMs: 0 })).toThrow(RangeError);
    await c.close();
  });
});
