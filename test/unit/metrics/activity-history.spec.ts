import { ActivityHistory, CounterTotals } from '../../../src/metrics/core/activity-history';
import { RingBuffer } from '../../../src/metrics/core/ring-buffer';

function totals(ids: number, refills = 0, failures = 0, e5 = 0, e4 = 0): CounterTotals {
  return { ids: { queue: ids, segment: 0 }, refills, refillFailures: failures, serverErrors: e5, clientErrors: e4 };
}

describe('RingBuffer', () => {
  it('keeps the last `capacity` items, oldest first', () => {
    const ring = new RingBuffer<number>(3);
    expect(ring.toArray()).toEqual([]);
    expect(ring.last()).toBeUndefined();
    for (let i = 1; i <= 5; i++) {
      ring.push(i);
    }
    expect(ring.toArray()).toEqual([3, 4, 5]);
    expect(ring.length).toBe(3);
    expect(ring.last()).toBe(5);
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});

describe('ActivityHistory', () => {
  it('turns counter totals into rates per interval; the first sample is the baseline', () => {
    const h = new ActivityHistory(10_000);
    h.record(0, totals(0), { 1: 500 });
    expect(h.points()).toEqual([]);
    h.record(10_000, totals(250, 2, 1, 3, 6), { 1: 300 });
    expect(h.points()).toEqual([
      {
        at: 10_000,
        idsPerSecond: { queue: 25, segment: 0 },
        refillsPerMinute: 12,
        refillFailuresPerMinute: 6,
        serverErrorsPerMinute: 18,
        clientErrorsPerMinute: 36,
        queueDepth: { 1: 300 },
      },
    ]);
  });

  it('holds 15 minutes of points at most, and a counter that went down counts from 0', () => {
    const h = new ActivityHistory(60_000);
    expect(h.capacity).toBe(16);
    let t = 0;
    for (let i = 0; i <= 100; i++) {
      h.record(t, totals(i * 60), null);
      t += 60_000;
    }
    expect(h.points()).toHaveLength(16);
    expect(h.points()[0].at).toBe(85 * 60_000);
    h.record(t, totals(30), null);
    expect(h.points().at(-1)?.idsPerSecond.queue).toBeCloseTo(0.5);
  });

  it('ignores a sample not later than the previous one', () => {
    const h = new ActivityHistory(1000);
    h.record(5000, totals(1), null);
    h.record(5000, totals(9), null);
    h.record(4000, totals(9), null);
    expect(h.points()).toEqual([]);
  });
});
