import { IdBuffer, IdBufferOptions, Lease } from '../src/id-buffer';
import { ShardleafError } from '../src/errors';
import { FakeClock, flush } from './fakes';

/** Hands out the leases given, in order; each fetch stays pending until `grant()`. */
class LeaseQueue {
  readonly pending: Array<(l: Lease) => void> = [];

  constructor(private readonly leases: Lease[]) {}

  readonly fetch = (): Promise<Lease> => new Promise<Lease>((resolve) => this.pending.push(resolve));

  grant(): void {
    const resolve = this.pending.shift();
    const lease = this.leases.shift();
    if (!resolve || !lease) {
      throw new Error('no fetch pending or no lease left');
    }
    resolve(lease);
  }
}

function options(clock: FakeClock, over: Partial<IdBufferOptions> = {}): IdBufferOptions {
  return { prefetchAt: 0.8, initialSize: 10, minSize: 1, maxSize: 80, targetLeaseMs: 1000, retryDelayMs: 100, clock, ...over };
}

function run(first: bigint, stride: bigint, count: number): bigint[] {
  return Array.from({ length: count }, (_, i) => first + stride * BigInt(i));
}

/** IDs taken one at a time: tryTakeOne and pollOne share one fast path (a run's next ID, no other check). */
describe('IdBuffer one by one (the fast path and its way out)', () => {
  it.each(['tryTakeOne', 'pollOne'] as const)('%s: every ID of each run once, in order, the prefetch at the prefetch point, across lease switches', async (method) => {
    const clock = new FakeClock();
    const leases = new LeaseQueue([
      { first: (5n << 14n) | 9n, stride: 1n << 14n, count: 10 },
      { first: (40n << 14n) | 9n, stride: 1n << 14n, count: 10 },
      { first: (90n << 14n) | 9n, stride: 1n << 14n, count: 10 },
    ]);
    const b = new IdBuffer(leases.fetch, options(clock));
    const take = (): bigint | undefined => b[method]();
    expect(take()).toBeUndefined();
    leases.grant();
    await flush();
    const got: bigint[] = [];
    // The 8th ID (80 % of 10) starts the prefetch, not one before.
    for (let i = 0; i < 7; i++) {
      got.push(take()!);
      expect(leases.pending.length).toBe(0);
    }
    got.push(take()!);
    expect(leases.pending.length).toBe(1);
    // IDs 9 and 10 go while the fetch is in flight; then nothing until it lands.
    got.push(take()!, take()!);
    expect(take()).toBeUndefined();
    expect(b.view()).toMatchObject({ left: 0, fetching: true });
    leases.grant();
    await flush();
    // Lease 2 became current; its prefetch point again; lease 3 lands while 2 IDs are left.
    for (let i = 0; i < 8; i++) {
      got.push(take()!);
    }
    expect(leases.pending.length).toBe(1);
    leases.grant();
    await flush();
    expect(b.view()).toMatchObject({ left: 2, nextReady: true, fetching: false });
    // The switch to the next lease happens on a take, without waiting.
    for (let i = 0; i < 12; i++) {
      got.push(take()!);
    }
    expect(got).toEqual([...run((5n << 14n) | 9n, 1n << 14n, 10), ...run((40n << 14n) | 9n, 1n << 14n, 10), ...run((90n << 14n) | 9n, 1n << 14n, 10)]);
    expect(leases.pending.length).toBe(1); // the 8th ID of lease 3 started the next prefetch
  });

  it('takes lists (snowflake batches) one by one, and runs after and before them, each ID once', async () => {
    const clock = new FakeClock();
    const leases = new LeaseQueue([
      { ids: [7n, 9n, 11n] },
      { first: 100n, stride: 1n, count: 5 },
      { ids: [3n, 1n] },
    ]);
    const b = new IdBuffer(leases.fetch, options(clock, { prefetchAt: 1 }));
    const got: bigint[] = [];
    for (let i = 0; i < 20 && got.length < 10; i++) {
      const id = b.tryTakeOne();
      if (id === undefined) {
        leases.grant();
        await flush();
      } else {
        got.push(id);
      }
    }
    expect(got).toEqual([7n, 9n, 11n, 100n, 101n, 102n, 103n, 104n, 3n, 1n]);
  });

  it('checks lease lifetimes on every take: no ID of an expired run, even with the next lease at hand', async () => {
    const clock = new FakeClock();
    const leases = new LeaseQueue([
      { first: 1n, stride: 1n, count: 10 },
      { first: 100n, stride: 1n, count: 10 },
      { first: 1000n, stride: 1n, count: 10 },
    ]);
    const b = new IdBuffer(leases.fetch, options(clock, { leaseTtlMs: 5000 }));
    expect(b.tryTakeOne()).toBeUndefined();
    leases.grant();
    await flush();
    expect([b.tryTakeOne(), b.tryTakeOne()]).toEqual([1n, 2n]);
    clock.advance(5000);
    // 3..10 expired: dropped, and a fetch starts.
    expect(b.pollOne()).toBeUndefined();
    leases.grant();
    await flush();
    const got = [b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne()];
    expect(got).toEqual([100n, 101n, 102n, 103n, 104n, 105n, 106n, 107n]);
    leases.grant(); // 1000.. is next now
    await flush();
    clock.advance(5000);
    // Both the rest of 100.. and all of 1000.. expired.
    expect(b.tryTakeOne()).toBeUndefined();
    expect(b.view()).toMatchObject({ left: 0, nextReady: false, fetching: true });
  });

  it('after close() takes nothing, though the current run had IDs and the next lease was here', async () => {
    const clock = new FakeClock();
    const leases = new LeaseQueue([
      { first: 1n, stride: 1n, count: 10 },
      { first: 100n, stride: 1n, count: 10 },
    ]);
    const b = new IdBuffer(leases.fetch, options(clock));
    b.tryTakeOne();
    leases.grant();
    await flush();
    for (let i = 0; i < 8; i++) {
      b.tryTakeOne();
    }
    leases.grant();
    await flush();
    expect(b.view()).toMatchObject({ left: 2, nextReady: true });
    b.close();
    expect(b.tryTakeOne()).toBeUndefined();
    expect(b.pollOne()).toBeUndefined();
    expect(leases.pending.length).toBe(0);
  });

  it('hands out no ID above a maxId that arrives while the fast path is open (next lease in flight)', async () => {
    const clock = new FakeClock();
    const leases = new LeaseQueue([
      { first: 10n, stride: 10n, count: 10 }, // 10..100
      { first: 5n, stride: 1n, count: 3, maxId: 95n },
    ]);
    const b = new IdBuffer(leases.fetch, options(clock));
    b.tryTakeOne();
    leases.grant();
    await flush();
    const got: bigint[] = [];
    for (let i = 0; i < 8; i++) {
      got.push(b.tryTakeOne()!); // the 8th starts the fetch
    }
    leases.grant(); // cuts 90, 100 to 90 only
    await flush();
    for (let id = b.tryTakeOne(); id !== undefined; id = b.tryTakeOne()) {
      got.push(id);
    }
    expect(got).toEqual([10n, 20n, 30n, 40n, 50n, 60n, 70n, 80n, 90n, 5n, 6n, 7n]);
  });

  it('hands out a run up to the largest signed 64-bit ID, and refuses a run that does not fit 64 bits', async () => {
    const clock = new FakeClock();
    const max = (1n << 63n) - 1n;
    const leases = new LeaseQueue([
      { first: max - 3n * (1n << 14n), stride: 1n << 14n, count: 4 }, // the last one is 2^63 - 1
      { first: (1n << 64n) - 2n, stride: 1n, count: 2 }, // 2^64 - 2, 2^64 - 1: the position after does not fit
    ]);
    const b = new IdBuffer(leases.fetch, options(clock, { prefetchAt: 1 }));
    expect(b.tryTakeOne()).toBeUndefined();
    leases.grant();
    await flush();
    expect([b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne(), b.tryTakeOne()]).toEqual([max - 3n * (1n << 14n), max - 2n * (1n << 14n), max - (1n << 14n), max]);
    expect(b.tryTakeOne()).toBeUndefined(); // used up; the last take started the next fetch
    leases.grant();
    await flush();
    expect(b.lastFailure()).toBeInstanceOf(RangeError);
    expect(b.view()).toMatchObject({ left: 0, nextReady: false });
    expect(b.tryTakeOne()).toBeUndefined();
  });

  it('pollOne throws a refused fetch once, only when nothing is buffered', async () => {
    const clock = new FakeClock();
    let refuse = false;
    const refusal = new ShardleafError(404, { code: -2, error: 'QUEUE_APP_NOT_FOUND', message: 'no app' }, 'http://a:1/api/id/1/lease');
    const b = new IdBuffer(
      () => (refuse ? Promise.reject(refusal) : Promise.resolve({ first: 1n, stride: 1n, count: 10 })),
      options(clock, { prefetchAt: 0.5 }),
    );
    expect(b.pollOne()).toBeUndefined();
    await flush();
    refuse = true;
    const got: bigint[] = [];
    for (let i = 0; i < 10; i++) {
      got.push(b.pollOne()!); // the 5th starts a fetch, refused
      await flush();
    }
    expect(got).toEqual(run(1n, 1n, 10));
    expect(() => b.pollOne()).toThrow(refusal);
    expect(b.pollOne()).toBeUndefined();
  });
});
