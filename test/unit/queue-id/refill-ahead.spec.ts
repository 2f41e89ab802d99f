import { RefillAhead } from '../../../src/queue-id/core/refill-ahead';
import { planSegment } from '../../../src/queue-id/core/refill-policy';
import { nextRefillSize, normaliseSize, refillCeiling } from '../../../src/queue-id/core/refill-size';
import { FakeClock } from '../snowflake/fake-clock';

const MIN = 60_000;
const settings = { idleRatio: 0.2, targetMs: 15 * MIN, maxSize: 100_000 };

describe('RefillAhead: the trigger after a pop', () => {
  it('does not trigger above the threshold, triggers at it, once while in flight, again after it finished', () => {
    const ahead = new RefillAhead(settings, () => 0);
    // step 1000, no refill seen: threshold 0.2 * 1000 = 200.
    expect(ahead.afterPop(1, 3, 1000, 201)).toBe(false);
    expect(ahead.inFlight(1, 3)).toBe(false);
    expect(ahead.afterPop(1, 3, 1000, 200)).toBe(true);
    expect(ahead.inFlight(1, 3)).toBe(true);
    // Every further pop below the threshold while the refill runs: no second one.
    for (const len of [199, 100, 1, 0]) {
      expect(ahead.afterPop(1, 3, 1000, len)).toBe(false);
    }
    // Other shards and apps are independent.
    expect(ahead.afterPop(1, 4, 1000, 0)).toBe(true);
    expect(ahead.afterPop(2, 3, 1000, 0)).toBe(true);
    ahead.finished(1, 3);
    expect(ahead.inFlight(1, 3)).toBe(false);
    expect(ahead.afterPop(1, 3, 1000, 250)).toBe(false);
    expect(ahead.afterPop(1, 3, 1000, 150)).toBe(true);
  });

  it('scales the threshold with the current refill size', () => {
    const clock = new FakeClock(0);
    const ahead = new RefillAhead(settings, () => clock.now());
    ahead.recordRefill(5, 0, 8000);
    expect(ahead.currentSize(5, 0, 1000)).toBe(8000);
    expect(ahead.threshold(5, 0, 1000)).toBe(1600);
    expect(ahead.afterPop(5, 0, 1000, 1601)).toBe(false);
    expect(ahead.afterPop(5, 0, 1000, 1600)).toBe(true);
  });

  it('a finished call for a shard never started is harmless; retain drops deleted apps but not in-flight ones', () => {
    const ahead = new RefillAhead(settings, () => 0);
    ahead.finished(9, 9);
    ahead.recordRefill(7, 1, 4000);
    ahead.recordRefill(8, 1, 4000);
    expect(ahead.afterPop(8, 2, 1000, 0)).toBe(true);
    ahead.retain((app) => app === 7);
    expect(ahead.currentSize(7, 1, 1000)).toBe(4000);
    expect(ahead.currentSize(8, 1, 1000)).toBe(1000);
    expect(ahead.inFlight(8, 2)).toBe(true);
  });
});

describe('RefillAhead: the refill size with a fake clock', () => {
  it('doubles while refills last less than the target, up to the maximum', () => {
    const clock = new FakeClock(1_000);
    const ahead = new RefillAhead({ ...settings, maxSize: 10_000 }, () => clock.now());
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const size = ahead.sizeFor(1, 0, 1000);
      ahead.recordRefill(1, 0, size);
      sizes.push(size);
      clock.time += 1_000; // used up in a second
    }
    // First refill: the step; then 2x per refill; the ceiling is 10 whole steps.
    expect(sizes).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('keeps the size between 1x and 2x the target, halves back towards the step beyond', () => {
    const clock = new FakeClock(0);
    const ahead = new RefillAhead(settings, () => clock.now());
    ahead.recordRefill(1, 0, 16_000);
    clock.time += 20 * MIN;
    expect(ahead.sizeFor(1, 0, 1000)).toBe(16_000);
    clock.time += 11 * MIN; // 31 min since the last refill
    expect(ahead.sizeFor(1, 0, 1000)).toBe(8000);
    const halves: number[] = [];
    for (let i = 0; i < 5; i++) {
      const size = ahead.sizeFor(1, 0, 1000);
      ahead.recordRefill(1, 0, size);
      halves.push(size);
      clock.time += 3 * 15 * MIN;
    }
    expect(halves).toEqual([8000, 4000, 2000, 1000, 1000]);
  });

  it('is measured per shard, and sizeFor does not change anything until a refill is recorded', () => {
    const clock = new FakeClock(0);
    const ahead = new RefillAhead(settings, () => clock.now());
    ahead.recordRefill(1, 0, 1000);
    clock.time += 10;
    expect(ahead.sizeFor(1, 0, 1000)).toBe(2000);
    expect(ahead.sizeFor(1, 0, 1000)).toBe(2000);
    expect(ahead.currentSize(1, 0, 1000)).toBe(1000);
    expect(ahead.sizeFor(1, 1, 1000)).toBe(1000);
  });

  it('follows a step changed by the operator: whole steps, at least one', () => {
    const clock = new FakeClock(0);
    const ahead = new RefillAhead(settings, () => clock.now());
    ahead.recordRefill(1, 0, 8000);
    expect(ahead.currentSize(1, 0, 3000)).toBe(6000);
    expect(ahead.currentSize(1, 0, 50_000)).toBe(50_000);
    // A step above the maximum size: one step per refill, never less.
    expect(ahead.currentSize(1, 0, 200_000)).toBe(200_000);
    clock.time += 1;
    expect(ahead.sizeFor(1, 0, 200_000)).toBe(200_000);
  });
});

describe('refill-size', () => {
  const s = { targetMs: 1000, maxSize: 10_500 };

  it('grows, keeps and shrinks in whole steps', () => {
    expect(refillCeiling(1000, 10_500)).toBe(10_000);
    expect(refillCeiling(20_000, 10_500)).toBe(20_000);
    expect(normaliseSize(2500, 1000, 10_500)).toBe(2000);
    expect(normaliseSize(1, 1000, 10_500)).toBe(1000);
    expect(nextRefillSize(4000, 1000, 999, s)).toBe(8000);
    expect(nextRefillSize(8000, 1000, 0, s)).toBe(10_000);
    expect(nextRefillSize(4000, 1000, 1000, s)).toBe(4000);
    expect(nextRefillSize(4000, 1000, 2000, s)).toBe(4000);
    expect(nextRefillSize(4000, 1000, 2001, s)).toBe(2000);
    expect(nextRefillSize(3000, 1000, 2001, s)).toBe(1000);
    expect(nextRefillSize(1000, 1000, 1e9, s)).toBe(1000);
    expect(() => nextRefillSize(1000, 0, 1, s)).toThrow(RangeError);
  });

  it('a grown refill is cut exactly at max_limit_id and then the shard is exhausted', () => {
    // Grown to 8 steps of 100 = 800 IDs; 250 indexes left under the limit.
    const size = nextRefillSize(400, 100, 1, { targetMs: 1000, maxSize: 100_000 });
    expect(size).toBe(800);
    expect(planSegment(9_750n, 100, 10_000n, size)).toEqual({ from: 9_751n, to: 10_000n });
    expect(planSegment(10_000n, 100, 10_000n, size)).toBeNull();
    // Far from the limit a grown refill is exactly `size` indexes: one row update of size/step steps.
    expect(planSegment(0n, 100, 10_000n, size)).toEqual({ from: 1n, to: 800n });
  });
});
