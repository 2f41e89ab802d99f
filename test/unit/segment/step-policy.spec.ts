import { MAX_STEP, SEGMENT_DURATION_MS, nextStep } from '../../../src/segment/core/step-policy';

const MIN = 60 * 1000;

describe('nextStep (Leaf dynamic step)', () => {
  it('doubles when the previous segment lasted less than 15 minutes', () => {
    expect(nextStep(1000, 1000, 0)).toBe(2000);
    expect(nextStep(1000, 1000, 14 * MIN)).toBe(2000);
    expect(nextStep(1000, 1000, SEGMENT_DURATION_MS - 1)).toBe(2000);
  });

  it('does not double past MAX_STEP', () => {
    expect(nextStep(MAX_STEP / 2, 1000, MIN)).toBe(MAX_STEP);
    expect(nextStep(MAX_STEP / 2 + 1, 1000, MIN)).toBe(MAX_STEP / 2 + 1);
    expect(nextStep(MAX_STEP, 1000, MIN)).toBe(MAX_STEP);
    expect(nextStep(3000, 1000, MIN, 5000)).toBe(3000);
  });

  it('keeps the step between 15 and 30 minutes', () => {
    expect(nextStep(4000, 1000, SEGMENT_DURATION_MS)).toBe(4000);
    expect(nextStep(4000, 1000, 29 * MIN)).toBe(4000);
  });

  it('halves from 30 minutes on, never below the DB step', () => {
    expect(nextStep(4000, 1000, 30 * MIN)).toBe(2000);
    expect(nextStep(4000, 1000, 24 * 60 * MIN)).toBe(2000);
    expect(nextStep(3000, 2000, 30 * MIN)).toBe(2000);
    expect(nextStep(1000, 1000, 30 * MIN)).toBe(1000);
    expect(nextStep(2001, 1000, 30 * MIN)).toBe(1000);
  });
});
