import { ShardleafClient, ShardleafClientOptions } from '../src/client';
import { ShardleafArgumentError, ShardleafClosedError, ShardleafError, ShardleafUnavailableError } from '../src/errors';
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
    await expect(c.segmentId('users')).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(c.queueIdBatch(1, 'alice', 2)).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(c.snowflakeId()).rejects.toBeInstanceOf(ShardleafClosedError);
    // The synchronous try* methods throw (documented).
    expect(() => c.trySegmentId('orders')).toThrow(ShardleafClosedError);
    expect(() => c.tryQueueId(1, 'alice')).toThrow(ShardleafClosedError);
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

  it('number(key) and numbers(key, n): one call per number or per batch of up to 1000, failover included', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock());
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

  it('validates its arguments locally: every promise-returning method rejects, never throws', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock());
    const calls: Array<[string, () => Promise<unknown>, unknown]> = [
      ['queueId appId 256', () => c.queueId(256, 'a'), ShardleafArgumentError],
      ['queueId appId -1', () => c.queueId(-1, 'a'), ShardleafArgumentError],
      ['queueId appId 1.5', () => c.queueId(1.5, 'a'), ShardleafArgumentError],
      ['queueId gatePass ""', () => c.queueId(1, ''), ShardleafArgumentError],
      ['queueIdBatch n 0', () => c.queueIdBatch(1, 'a', 0), ShardleafArgumentError],
      ['queueIdBatch appId NaN', () => c.queueIdBatch(Number.NaN, 'a', 1), ShardleafArgumentError],
      ['queueIdString gatePass ""', () => c.queueIdString(1, ''), ShardleafArgumentError],
      ['segmentId tag ""', () => c.segmentId(''), ShardleafArgumentError],
      ['segmentIdBatch n 0', () => c.segmentIdBatch('orders', 0), ShardleafArgumentError],
      ['segmentIdBatch n 1.5', () => c.segmentIdBatch('orders', 1.5), ShardleafArgumentError],
      ['snowflakeId key ""', () => c.snowflakeId(''), ShardleafArgumentError],
      ['snowflakeIdBatch n -1', () => c.snowflakeIdBatch('default', -1), ShardleafArgumentError],
      ['number key ""', () => c.number(''), ShardleafArgumentError],
      ['numbers n 0', () => c.numbers('ORD', 0), ShardleafArgumentError],
    ];
    for (const [name, call, type] of calls) {
      let promise: Promise<unknown> | undefined;
      let thrown: unknown;
      try {
        promise = call();
      } catch (err) {
        thrown = err;
      }
      expect({ name, thrown }).toEqual({ name, thrown: undefined });
      await expect(promise).rejects.toBeInstanceOf(type as new () => Error);
    }
    expect(() => c.tryQueueId(256, 'a')).toThrow(ShardleafArgumentError);
    expect(() => c.trySegmentId('')).toThrow(ShardleafArgumentError);
    // The documented type, naming the argument; still a RangeError for code that caught those.
    const err = await c.queueId(999, 'a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardleafArgumentError);
    expect(err).toBeInstanceOf(RangeError);
    expect(err).toMatchObject({ name: 'ShardleafArgumentError', argument: 'appId', message: 'appId must be an integer 0..255, got 999' });
    expect(() => new ShardleafClient({ servers: A, prefetchAt: 2 })).toThrow(ShardleafArgumentError);
    expect(servers.calls).toHaveLength(0);
    await c.close();
  });

  it('try* for an unknown app or tag surfaces the 404: thrown once per refused fetch, and through lastQueueFailure / lastSegmentFailure', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = client(servers, clock, { servers: A });
    // The first call starts the lease fetch and has nothing yet.
    expect(c.tryQueueId(7, 'alice')).toBeUndefined();
    await flush();
    const failure = c.lastQueueFailure(7, 'alice');
    expect(failure).toBeInstanceOf(ShardleafError);
    expect(failure).toMatchObject({ status: 404, error: 'QUEUE_APP_NOT_FOUND', code: -2 });
    // The next call throws that 404, once; then undefined again until another fetch is refused.
    expect(() => c.tryQueueId(7, 'alice')).toThrow(failure);
    expect(c.tryQueueId(7, 'alice')).toBeUndefined();
    clock.advance(100);
    expect(c.tryQueueId(7, 'alice')).toBeUndefined();
    await flush();
    const again = c.lastQueueFailure(7, 'alice');
    expect(again).not.toBe(failure);
    expect(() => c.tryQueueId(7, 'alice')).toThrow(ShardleafError);
    expect(servers.calls.filter((call) => call.path === '/api/id/7/lease')).toHaveLength(2);

    expect(c.trySegmentId('nope')).toBeUndefined();
    await flush();
    expect(c.lastSegmentFailure('nope')).toMatchObject({ status: 404, error: 'SEGMENT_KEY_NOT_FOUND' });
    expect(() => c.trySegmentId('nope')).toThrow(ShardleafError);
    expect(c.trySegmentId('nope')).toBeUndefined();
    // A known app: nothing failed, nothing thrown.
    expect(c.tryQueueId(1, 'alice')).toBeUndefined();
    await flush();
    expect(c.lastQueueFailure(1, 'alice')).toBeUndefined();
    expect(typeof c.tryQueueId(1, 'alice')).toBe('bigint');
    await c.close();
  });

  it('checks appId before looking a buffer up: a fractional appId never reaches another app\'s buffer', async () => {
    // Buffer keys are appId * 64 + shard: appId 1.5 with a gatePass of shard s would be app 1's shard s + 32.
    const byShard = new Map<number, string>();
    for (let i = 0; byShard.size < 64; i++) {
      const g = `g${i}`;
      if (!byShard.has(shardOf(g))) {
        byShard.set(shardOf(g), g);
      }
    }
    const low = byShard.get(3) as string;
    const high = byShard.get(35) as string;
    const servers = new FakeServers();
    const c = client(servers, new FakeClock(), { servers: A });
    const own = await c.queueId(1, high);
    expect(own & 0x3fffn).toBe(BigInt((35 << 8) | 1));
    await expect(c.queueId(1.5, low)).rejects.toBeInstanceOf(RangeError);
    await expect(c.queueIdBatch(1.5, low, 2)).rejects.toBeInstanceOf(RangeError);
    expect(() => c.tryQueueId(1.5, low)).toThrow(RangeError);
    // App 1's buffer lost nothing to those calls.
    expect(await c.queueId(1, high)).toBe(own + (1n << 14n));
    await c.close();
  });

  it.each([
    ['maxLease above the server\'s 10,000,000', { maxLease: 10_000_001 }, /maxLease/],
    ['initialLease above 10,000,000', { initialLease: 20_000_000 }, /initialLease/],
    ['minLease above maxLease', { minLease: 500, maxLease: 100 }, /minLease/],
    ['minLease 0', { minLease: 0 }, /minLease/],
    ['maxLease fractional', { maxLease: 10.5 }, /maxLease/],
    ['prefetchAt 0', { prefetchAt: 0 }, /prefetchAt/],
    ['prefetchAt 1.5', { prefetchAt: 1.5 }, /prefetchAt/],
    ['prefetchAt NaN', { prefetchAt: Number.NaN }, /prefetchAt/],
    ['timeoutMs 0', { timeoutMs: 0 }, /timeoutMs/],
    ['targetLeaseMs negative', { targetLeaseMs: -1 }, /targetLeaseMs/],
    ['backoffMaxMs Infinity', { backoffMaxMs: Number.POSITIVE_INFINITY }, /backoffMaxMs/],
    ['snowflakeBatch above 1000', { snowflakeBatch: 5000 }, /snowflakeBatch/],
    ['leaseTtlMs 0', { leaseTtlMs: 0 }, /leaseTtlMs/],
  ])('refuses the option %s, naming it', (_name, over, message) => {
    expect(() => new ShardleafClient({ servers: A, ...over })).toThrow(message);
  });

  it('accepts the largest lease the server allows', () => {
    expect(() => new ShardleafClient({ servers: A, maxLease: 10_000_000, initialLease: 10_000_000 })).not.toThrow();
    expect(() => new ShardleafClient({ servers: [] })).toThrow(RangeError);
  });

  it('hands out no held queue ID once the shard answers 410 (max_limit_id lowered below the leased range)', async () => {
    const servers = new FakeServers();
    const c = client(servers, new FakeClock(), { servers: A });
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
    const c = client(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(1, 'alice', 14);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 14 }, (_, i) => BigInt(i + 1)));
    expect(ids.every((id) => id <= servers.queueMaxLimitId)).toBe(true);
    await expect(c.queueId(1, 'alice')).rejects.toMatchObject({ status: 410 });
    await c.close();
  });

  it('drops a lease older than leaseTtlMs and fetches a new one', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = client(servers, clock, { servers: A, leaseTtlMs: 5000 });
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

describe('Transport', () => {
  it('leaves no unhandled rejection when the call is aborted before its fetch settles', async () => {
    const clock = new FakeClock();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      let rejectLate: (err: Error) => void = () => undefined;
      const transport: Transport = new Transport({
        servers: [A],
        timeoutMs: 1000,
        backoffBaseMs: 100,
        backoffMaxMs: 800,
        clock,
        // The client is closed while the fetch is being made: its signal is aborted before abortable() runs.
        fetch: () => {
          transport.close();
          return new Promise((_resolve, reject) => {
            rejectLate = reject;
          });
        },
      });
      await expect(transport.request('GET', '/x')).rejects.toBeInstanceOf(ShardleafClosedError);
      rejectLate(new Error('socket closed'));
      await flush();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
