import { IdBuffer, IdBufferOptions, Lease } from '../src/id-buffer';
import { ShardleafClosedError } from '../src/errors';
import { FakeClock, flush } from './fakes';

/** A fetcher whose fetches stay pending until the test resolves or fails them. */
class ManualFetcher {
  readonly pending: Array<{ size: number; resolve: (l: Lease) => void; reject: (e: unknown) => void }> = [];
  private nextFirst = 1n;
  readonly sizes: number[] = [];

  readonly fetch = (size: number): Promise<Lease> => {
    this.sizes.push(size);
    return new Promise<Lease>((resolve, reject) => this.pending.push({ size, resolve, reject }));
  };

  /** Grants the oldest pending fetch a run of exactly the size asked. */
  grant(): void {
    const p = this.pending.shift();
    if (!p) {
      throw new Error('no fetch pending');
    }
    const first = this.nextFirst;
    this.nextFirst += BigInt(p.size);
    p.resolve({ first, stride: 1n, count: p.size });
  }

  fail(err: unknown): void {
    const p = this.pending.shift();
    if (!p) {
      throw new Error('no fetch pending');
    }
    p.reject(err);
  }
}

function options(clock: FakeClock, over: Partial<IdBufferOptions> = {}): IdBufferOptions {
  return {
    prefetchAt: 0.8,
    initialSize: 10,
    minSize: 5,
    maxSize: 80,
    targetLeaseMs: 1000,
    retryDelayMs: 100,
    clock,
    ...over,
  };
}

describe('IdBuffer (double buffer of leased IDs)', () => {
  it('fetches on first use, hands out the lease in order, and prefetches the next once 80 % is used', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock, { targetLeaseMs: 1 }));
    expect(b.tryTakeOne()).toBeUndefined();
    expect(f.pending.length).toBe(1);
    const waiting = b.take(3);
    f.grant();
    expect(await waiting).toEqual([1n, 2n, 3n]);
    // 3 of 10 used: no fetch yet. The 8th ID reaches 80 %.
    const ids: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(b.tryTakeOne()!);
    }
    expect(ids).toEqual([4n, 5n, 6n, 7n]);
    expect(f.pending.length).toBe(0);
    expect(b.tryTakeOne()).toBe(8n);
    expect(f.pending.length).toBe(1);
    expect(b.view()).toMatchObject({ left: 2, nextReady: false, fetching: true });
  });

  it('keeps at most one fetch in flight however many callers run out', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock));
    const callers = Array.from({ length: 50 }, () => b.takeOne());
    await flush();
    expect(f.pending.length).toBe(1);
    f.grant(); // 10 IDs for 50 callers: the rest wait for the next fetch, again one at a time
    await flush();
    while (f.pending.length > 0) {
      expect(f.pending.length).toBe(1);
      f.grant();
      await flush();
    }
    const got = await Promise.all(callers);
    expect(new Set(got).size).toBe(50);
    expect(got.slice().sort((a, b) => (a < b ? -1 : 1))).toEqual(got.slice().sort((a, b) => (a < b ? -1 : 1)));
  });

  it('switches to the prefetched lease without waiting, and never returns an ID twice', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock, { targetLeaseMs: 1 }));
    const first = b.take(8);
    f.grant();
    expect(await first).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
    expect(f.pending.length).toBe(1);
    f.grant(); // the next lease: 11..20 (size 10, clock did not move: not doubled below target 1 ms? duration 0 < 1 → doubled)
    await flush();
    expect(b.view()).toMatchObject({ left: 2, nextReady: true, fetching: false });
    const all = await b.take(12);
    expect(all.slice(0, 2)).toEqual([9n, 10n]);
    expect(all[2]).toBe(11n);
    expect(new Set(all).size).toBe(12);
  });

  it('adapts the lease size like Leaf: doubles when used up within the target, halves after twice the target', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock, { prefetchAt: 1 }));
    const drain = async (): Promise<void> => {
      const p = b.take(b.view().left + 1);
      await flush();
      f.grant();
      await p;
    };
    const p0 = b.takeOne();
    f.grant();
    await p0;
    // Fast: each lease used up 100 ms after the previous fetch → 20, 40, 80, then capped at 80.
    for (let i = 0; i < 4; i++) {
      clock.advance(100);
      await drain();
    }
    expect(f.sizes).toEqual([10, 20, 40, 80, 80]);
    // Between 1x and 2x the target: kept.
    clock.advance(1500);
    await drain();
    // Slow: 2.5 s > 2 x 1 s → halved, down to minSize 5.
    for (let i = 0; i < 5; i++) {
      clock.advance(2500);
      await drain();
    }
    expect(f.sizes.slice(5)).toEqual([80, 40, 20, 10, 5, 5]);
  });

  it('reports a failed fetch to the callers waiting for it; the next call fetches again', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock));
    const waiting = b.take(2);
    f.fail(new Error('server down'));
    await expect(waiting).rejects.toThrow('server down');
    const again = b.take(2);
    await flush();
    f.grant();
    expect(await again).toEqual([1n, 2n]);
  });

  it('does not retry a failed background fetch before retryDelayMs, but a caller that runs out does', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock));
    const p = b.take(8);
    f.grant();
    await p; // 8 of 10 used: background fetch started
    f.fail(new Error('boom'));
    await flush();
    expect(b.tryTakeOne()).toBe(9n);
    expect(f.pending.length).toBe(0);
    clock.advance(100);
    expect(b.tryTakeOne()).toBe(10n);
    expect(f.pending.length).toBe(1);
    f.fail(new Error('boom again'));
    await flush();
    // Empty now: a caller fetches at once, backoff or not.
    const w = b.takeOne();
    await flush();
    expect(f.pending.length).toBe(1);
    f.grant();
    expect(await w).toBe(11n);
  });

  it('tryTakeOne on an empty buffer does not fetch again before retryDelayMs after a failure', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock));
    expect(b.tryTakeOne()).toBeUndefined();
    expect(f.sizes).toHaveLength(1);
    f.fail(new Error('server down'));
    await flush();
    // A polling caller during an outage: no fetch per call.
    for (let i = 0; i < 10; i++) {
      expect(b.tryTakeOne()).toBeUndefined();
      await flush();
    }
    expect(f.sizes).toHaveLength(1);
    clock.advance(99);
    expect(b.tryTakeOne()).toBeUndefined();
    expect(f.sizes).toHaveLength(1);
    clock.advance(1);
    expect(b.tryTakeOne()).toBeUndefined();
    expect(f.sizes).toHaveLength(2);
    f.grant();
    await flush();
    expect(b.tryTakeOne()).toBe(1n);
  });

  it('cuts the new lease and the ones it holds at the maxId a lease reports', async () => {
    const clock = new FakeClock();
    const leases: Lease[] = [
      { first: 100n, stride: 10n, count: 10 }, // 100..190
      { first: 5n, stride: 1n, count: 3, maxId: 145n },
    ];
    const b = new IdBuffer(() => Promise.resolve(leases.shift() as Lease), options(clock, { initialSize: 10, minSize: 10 }));
    const first8 = await b.take(8); // 100..170; lease 2 prefetched, reporting maxId 145
    expect(first8).toEqual([100n, 110n, 120n, 130n, 140n, 150n, 160n, 170n]);
    await flush();
    // 180 and 190 are above 145: dropped; lease 2 (5..7) is current at once.
    expect(b.view()).toMatchObject({ left: 3, nextReady: false });
    expect(await b.take(3)).toEqual([5n, 6n, 7n]);

    const cappedLeases: Lease[] = [
      { first: 1n, stride: 1n, count: 10, maxId: 4n },
      { first: 100n, stride: 1n, count: 10 },
    ];
    const capped = new IdBuffer(() => Promise.resolve(cappedLeases.shift() as Lease), options(clock, { initialSize: 10, minSize: 10 }));
    expect(await capped.take(5)).toEqual([1n, 2n, 3n, 4n, 100n]);
  });

  it('drops what it holds when a fetch fails with an error dropHeldOn accepts', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock, { minSize: 10, maxSize: 10, dropHeldOn: (err) => err.message === 'revoked' }));
    const p = b.take(8);
    f.grant();
    await p; // 8 of 10 used: background fetch
    f.fail(new Error('other'));
    await flush();
    expect(b.tryTakeOne()).toBe(9n); // kept
    clock.advance(100);
    expect(b.tryTakeOne()).toBe(10n);
    const w = b.takeOne();
    await flush();
    f.grant(); // 11..20
    expect(await w).toBe(11n);
    for (let i = 0; i < 7; i++) {
      b.tryTakeOne();
    }
    // 18 used: background fetch; 19 and 20 are held when it fails.
    expect(b.view()).toMatchObject({ left: 2, fetching: true });
    f.fail(new Error('revoked'));
    await flush();
    expect(b.tryTakeOne()).toBeUndefined();
  });

  it('hands out lists (snowflake batches) and runs with a stride (queue IDs)', async () => {
    const clock = new FakeClock();
    const list = new IdBuffer(() => Promise.resolve({ ids: [7n, 9n, 11n] }), options(clock, { minSize: 1, initialSize: 3 }));
    expect(await list.take(4)).toEqual([7n, 9n, 11n, 7n]);
    const run = new IdBuffer(
      () => Promise.resolve({ first: (5n << 14n) | 1n, stride: 1n << 14n, count: 2 }),
      options(clock, { minSize: 1, initialSize: 2 }),
    );
    expect(await run.take(2)).toEqual([(5n << 14n) | 1n, (6n << 14n) | 1n]);
  });

  it('close() drops the buffered IDs, fails waiting callers and starts no fetch', async () => {
    const clock = new FakeClock();
    const f = new ManualFetcher();
    const b = new IdBuffer(f.fetch, options(clock));
    const waiting = b.takeOne();
    await flush();
    b.close();
    f.grant();
    await expect(waiting).rejects.toBeInstanceOf(ShardleafClosedError);
    await expect(b.take(1)).rejects.toBeInstanceOf(ShardleafClosedError);
    expect(b.tryTakeOne()).toBeUndefined();
    expect(f.pending.length).toBe(0);
  });

  it('refuses bad options', () => {
    const clock = new FakeClock();
    expect(() => new IdBuffer(() => Promise.reject(new Error('x')), options(clock, { prefetchAt: 0 }))).toThrow(RangeError);
    expect(() => new IdBuffer(() => Promise.reject(new Error('x')), options(clock, { minSize: 10, maxSize: 5 }))).toThrow(RangeError);
  });
});
