import { ShardleafError } from '../src/errors';
import { FakeClock, FakeServers, flush } from './fakes';
import { A, testClient } from './test-client';

describe('ShardleafClient try* and last*Failure: why a buffer has nothing', () => {
  it('try* for an unknown app or tag surfaces the 404: thrown once per refused fetch, and through lastQueueFailure / lastSegmentFailure', async () => {
    const servers = new FakeServers();
    const clock = new FakeClock();
    const c = testClient(servers, clock, { servers: A });
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

  it('try* hands out what is buffered although the prefetch was refused, then throws that refusal once', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { servers: A });
    expect(await c.segmentId('orders')).toBe(1n); // lease 1..10
    servers.tags.delete('orders'); // deleted meanwhile: the prefetch at 80 % answers 404
    const taken: Array<bigint | undefined> = [];
    for (let i = 0; i < 9; i++) {
      taken.push(c.trySegmentId('orders'));
      await flush();
    }
    expect(taken).toEqual([2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n]);
    expect(c.lastSegmentFailure('orders')).toMatchObject({ status: 404, error: 'SEGMENT_KEY_NOT_FOUND' });
    expect(() => c.trySegmentId('orders')).toThrow(ShardleafError);
    expect(c.trySegmentId('orders')).toBeUndefined();
    await c.close();
  });

  it('last*Failure only looks: no buffer for a key never used, undefined for bad input, nothing thrown after close()', async () => {
    const servers = new FakeServers();
    const c = testClient(servers, new FakeClock(), { servers: A });
    expect([
      c.lastQueueFailure(7, 'alice'),
      c.lastQueueFailure(256, 'alice'),
      c.lastQueueFailure(1.5, 'alice'),
      c.lastQueueFailure(1, ''),
      c.lastSegmentFailure('nope'),
      c.lastSegmentFailure(''),
    ]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(c.buffers()).toEqual([]);
    await flush();
    expect(servers.calls).toHaveLength(0);
    // Reading the failure does not take the one throw of try*.
    expect(c.trySegmentId('nope')).toBeUndefined();
    await flush();
    expect(c.lastSegmentFailure('nope')).toMatchObject({ status: 404 });
    expect(c.lastSegmentFailure('nope')).toMatchObject({ status: 404 });
    expect(() => c.trySegmentId('nope')).toThrow(ShardleafError);
    await c.close();
    expect(c.lastSegmentFailure('nope')).toMatchObject({ status: 404 });
    expect(c.lastQueueFailure(7, 'alice')).toBeUndefined();
    expect(c.buffers().map((b) => b.key)).toEqual(['nope']);
  });
});
