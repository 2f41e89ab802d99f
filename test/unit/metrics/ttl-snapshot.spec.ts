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
    const snap = new TtlSnapshot(m.compute, 5000, { now: clock });
    const reads = Array.from({ length: 50 }, () => snap.get());
    await flush();
    expect(m.calls()).toBe(1);
    m.settle(0).resolve(7);
    expect(await Promise.all(reads)).toEqual(Array(50).fill(7));
  });

  it('serves the cached value within the TTL and recomputes after it', async () => {
    const m = manual();
    const snap = new TtlSnapshot(m.compute, 5000, { now: clock });
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
    const snap = new TtlSnapshot(m.compute, 5000, { now: clock });
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
    const snap = new TtlSnapshot(m.compute, 5000, { now: clock });
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
    const snap = new TtlSnapshot(m.compute, 0, { now: clock });
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
    }, 0, { now: clock });
    await expect(snap.get()).rejects.toThrow('boom');
    await expect(snap.get()).rejects.toThrow('boom');
    expect(calls).toBe(2);
  });

  describe('with staleMs', () => {
    it('serves the held value past the TTL at once while one computation replaces it', async () => {
      const m = manual();
      const snap = new TtlSnapshot(m.compute, 5000, { staleMs: 15_000, now: clock });
      const first = snap.get();
      await flush();
      m.settle(0).resolve(1);
      expect(await first).toBe(1);
      now += 5000;
      // Past the TTL: the held value, and one computation in the background for every reader.
      expect(await Promise.all(Array.from({ length: 10 }, () => snap.get()))).toEqual(Array(10).fill(1));
      await flush();
      expect(m.calls()).toBe(2);
      m.settle(1).resolve(2);
      await flush();
      expect(await snap.get()).toBe(2);
      expect(m.calls()).toBe(2);
    });

    it('waits once the held value is older than TTL + staleMs', async () => {
      const m = manual();
      const snap = new TtlSnapshot(m.compute, 5000, { staleMs: 15_000, now: clock });
      const first = snap.get();
      await flush();
      m.settle(0).resolve(1);
      await first;
      now += 20_000;
      let answered = false;
      const second = snap.get().then((v) => {
        answered = true;
        return v;
      });
      await flush();
      expect(answered).toBe(false);
      m.settle(1).resolve(2);
      expect(await second).toBe(2);
    });

    it('fresh() waits for a computation past the TTL, which get() shares', async () => {
      const m = manual();
      const snap = new TtlSnapshot(m.compute, 5000, { staleMs: 15_000, now: clock });
      const first = snap.fresh();
      await flush();
      m.settle(0).resolve(1);
      expect(await first).toBe(1);
      now += 4999;
      expect(await snap.fresh()).toBe(1);
      now += 1;
      const fresh = snap.fresh();
      expect(await snap.get()).toBe(1);
      await flush();
      expect(m.calls()).toBe(2);
      m.settle(1).resolve(2);
      expect(await fresh).toBe(2);
    });

    it('holds the failure of a background computation like a value (nothing left unhandled)', async () => {
      const m = manual();
      const snap = new TtlSnapshot(m.compute, 5000, { staleMs: 15_000, now: clock });
      const first = snap.get();
      await flush();
      m.settle(0).resolve(1);
      await first;
      now += 5000;
      expect(await snap.get()).toBe(1);
      await flush();
      m.settle(1).reject(new Error('mysql down'));
      await flush();
      await expect(snap.get()).rejects.toThrow('mysql down');
      expect(m.calls()).toBe(2);
    });

    it('never serves stale with TTL 0', async () => {
      const m = manual();
      const snap = new TtlSnapshot(m.compute, 0, { staleMs: 15_000, now: clock });
      const a = snap.get();
      await flush();
      m.settle(0).resolve(1);
      await a;
      const b = snap.get();
      await flush();
      expect(m.calls()).toBe(2);
      m.settle(1).resolve(2);
      expect(await b).toBe(2);
    });
  });
});
