import { TtlSnapshot } from '../../../src/metrics/core/ttl-snapshot';

/** A computation the test settles by hand, counting how often it started. */
function manual() {
  let calls = 0;
  const pending: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
  const compute = () => {
    calls++;
    return new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { compute, calls: () => calls, settle: (i: number) => pending[i] };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('TtlSnapshot', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000;
  });

  it('shares one computation among concurrent readers', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 5000, clock);
    const reads = Array.from({ length: 50 }, () => snap.get());
    await flush();
    expect(m.calls()).toBe(1);
    m.settle(0).resolve(7);
    expect(await Promise.all(reads)).toEqual(Array(50).fill(7));
  });

  it('serves the cached value within the TTL and recomputes after it', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 5000, clock);
    const first = snap.get();
    await flush();
    m.settle(0).resolve(1);
    expect(await first).toBe(1);
    now += 4999;
    for (let i = 0; i < 20; i++) {
      expect(await snap.get()).toBe(1);
    }
    expect(m.calls()).toBe(1);
    now += 1;
    const second = snap.get();
    await flush();
    expect(m.calls()).toBe(2);
    m.settle(1).resolve(2);
    expect(await second).toBe(2);
  });

  it('counts the TTL from the end of the computation', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 5000, clock);
    const first = snap.get();
    await flush();
    now += 60_000; // a slow computation
    m.settle(0).resolve(1);
    await first;
    now += 4999;
    expect(await snap.get()).toBe(1);
    expect(m.calls()).toBe(1);
  });

  it('caches a failure for the TTL too, then retries', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 5000, clock);
    const first = snap.get();
    await flush();
    m.settle(0).reject(new Error('redis down'));
    await expect(first).rejects.toThrow('redis down');
    await expect(snap.get()).rejects.toThrow('redis down');
    expect(m.calls()).toBe(1);
    now += 5000;
    const second = snap.get();
    await flush();
    m.settle(1).resolve(3);
    expect(await second).toBe(3);
  });

  it('with TTL 0 computes on every read, still sharing a running computation', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 0, clock);
    const a = snap.get();
    const b = snap.get();
    await flush();
    expect(m.calls()).toBe(1);
    m.settle(0).resolve(1);
    expect([await a, await b]).toEqual([1, 1]);
    const c = snap.get();
    await flush();
    expect(m.calls()).toBe(2);
    m.settle(1).resolve(2);
    expect(await c).toBe(2);
  });

  it('survives a computation that throws synchronously', async () => {
    let calls = 0;
    const snap = new TtlSnapshot<number>(() => {
      calls++;
      throw new Error('boom');
    }, 0, clock);
    await expect(snap.get()).rejects.toThrow('boom');
    await expect(snap.get()).rejects.toThrow('boom');
    expect(calls).toBe(2);
  });
});
