import { firstIndexAfter, needsRefill, planSegment, unallocated } from '../../../src/queue-id/core/refill-policy';

describe('needsRefill (IDLE = 0.2)', () => {
  it('refills at or below 0.2 * step and not above', () => {
    expect(needsRefill(0, 1000)).toBe(true);
    expect(needsRefill(200, 1000)).toBe(true);
    expect(needsRefill(201, 1000)).toBe(false);
    expect(needsRefill(2, 10)).toBe(true);
    expect(needsRefill(3, 10)).toBe(false);
  });
});

describe('planSegment', () => {
  it('takes one step after max_id (seed: max_id - step + 1 .. max_id)', () => {
    expect(planSegment(0n, 1000, 1_000_000n)).toEqual({ from: 1n, to: 1000n });
    expect(planSegment(1000n, 1000, 1_000_000n)).toEqual({ from: 1001n, to: 2000n });
  });

  it('takes whole steps enough for a batch', () => {
    expect(planSegment(0n, 100, 1_000_000n, 250)).toEqual({ from: 1n, to: 300n });
  });

  it('stops at the limit and then reports exhaustion', () => {
    expect(planSegment(990n, 100, 1000n)).toEqual({ from: 991n, to: 1000n });
    expect(planSegment(1000n, 100, 1000n)).toBeNull();
    expect(planSegment(5n, 100, -1n)).toBeNull();
  });

  it('starts right after max_id, never below index 0', () => {
    expect(firstIndexAfter(9n)).toBe(10n);
    expect(firstIndexAfter(-5n)).toBe(0n);
    expect(planSegment(-5n, 10, 1000n)).toEqual({ from: 0n, to: 5n });
  });

  it('refuses a non-positive step', () => {
    expect(() => planSegment(0n, 0, 10n)).toThrow(RangeError);
  });
});

describe('unallocated', () => {
  it('counts what the DB can still hand out', () => {
    expect(unallocated(990n, 1000n)).toBe(10n);
    expect(unallocated(1000n, 1000n)).toBe(0n);
    expect(unallocated(5n, -1n)).toBe(0n);
  });
});
