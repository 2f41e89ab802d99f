import { ShardleafClosedError, ShardleafError, ShardleafUnavailableError } from '../src/errors';
import { Transport } from '../src/transport';
import { FakeClock, FakeServers, flush } from './fakes';
import { A, B, C, testClient } from './test-client';

describe('ShardleafClient failover over several servers', () => {
  it('goes round robin over the servers', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { prefetchAt: 1 });
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
    const c = testClient(servers, new FakeClock());
    expect(await c.segmentIdBatch('orders', 2)).toEqual([1n, 2n]);
    expect(servers.calls.map((x) => x.server)).toEqual([A, B, C]);
    await c.close();
  });

  it('throws a ShardleafUnavailableError naming every attempt when no server answers', async () => {
    const servers = new FakeServers();
    for (const s of [A, B, C]) {
      servers.mode(s, '503');
    }
    const c = testClient(servers, new FakeClock());
    const err = await c.segmentId('orders').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardleafUnavailableError);
    expect((err as ShardleafUnavailableError).failures).toHaveLength(3);
    expect((err as Error).message).toContain('HTTP 503');
    await c.close();
  });

  it('throws a 4xx as a typed ShardleafError with the server body, without asking another server', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock());
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
    const c = testClient(servers, new FakeClock(), { servers: A });
    const ids = await c.queueIdBatch(1, 'alice', 15);
    expect(ids.map((id) => id >> 14n)).toEqual(Array.from({ length: 15 }, (_, i) => BigInt(i + 1)));
    await expect(c.queueId(1, 'alice')).rejects.toMatchObject({ status: 410, code: -5, error: 'QUEUE_EXHAUSTED' });
    await c.close();
  });

  it('times out a call that hangs and goes on to the next server', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    servers.mode(A, 'hang');
    const c = testClient(servers, clock);
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
