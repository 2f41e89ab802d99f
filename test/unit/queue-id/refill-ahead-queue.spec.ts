import { ShardRef } from '../../../src/queue-id/core/shard-ref';
import { RefillResult } from '../../../src/queue-id/refill/shard-refill';
import { queueFixture } from './queue-fixture';

/**
 * Background (ahead) refills on one instance: at most two run at once, the others wait in trigger
 * order and start as running ones finish; a shard waiting counts as in flight (not triggered
 * again); at shutdown the waiting ones are dropped and the running ones awaited.
 */
describe('BackgroundRefills: background refills run two at a time', () => {
  function setUp() {
    const f = queueFixture();
    const service = f.background;
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    jest.spyOn(f.shardRefill, 'refill').mockImplementation(
      ({ shardId }: ShardRef) =>
        new Promise<RefillResult>((resolve) => {
          started.push(shardId);
          finish.set(shardId, () => resolve({ status: 'refilled', pushed: 1000 }));
        }),
    );
    return { service, ahead: f.ahead, started, finish };
  }

  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('starts two, queues the rest in order, and starts the next as one finishes', async () => {
    const { service, started, finish } = setUp();
    for (const shard of [1, 2, 3, 4]) {
      service.afterPop({ appId: 9, shardId: shard }, 1000, 0);
    }
    // A shard already running or waiting is not triggered again.
    service.afterPop({ appId: 9, shardId: 1 }, 1000, 0);
    service.afterPop({ appId: 9, shardId: 3 }, 1000, 0);
    await tick();
    expect(started).toEqual([1, 2]);
    finish.get(2)?.();
    await tick();
    expect(started).toEqual([1, 2, 3]);
    finish.get(1)?.();
    await tick();
    expect(started).toEqual([1, 2, 3, 4]);
    finish.get(3)?.();
    finish.get(4)?.();
    await service.settled();
    // Finished shards can be triggered again.
    service.afterPop({ appId: 9, shardId: 1 }, 1000, 0);
    await tick();
    expect(started).toEqual([1, 2, 3, 4, 1]);
    finish.get(1)?.();
    await service.settled();
  });

  it('drops the waiting refills at shutdown and awaits the running ones', async () => {
    const { service, ahead, started, finish } = setUp();
    for (const shard of [1, 2, 3, 4]) {
      service.afterPop({ appId: 9, shardId: shard }, 1000, 0);
    }
    await tick();
    const closed = service.beforeApplicationShutdown();
    let done = false;
    void closed.then(() => (done = true));
    await tick();
    expect(done).toBe(false);
    finish.get(1)?.();
    finish.get(2)?.();
    await closed;
    expect(started).toEqual([1, 2]);
    expect(ahead.inFlight(9, 3)).toBe(false);
    expect(ahead.inFlight(9, 4)).toBe(false);
  });
});
