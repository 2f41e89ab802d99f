import { MissingRecheck } from '../../../src/infra/database/missing-recheck';

describe('MissingRecheck', () => {
  it('tried until found missing, then again after the interval; transitions reported once', () => {
    let now = 1000;
    const recheck = new MissingRecheck(60_000, () => now);
    expect(recheck.shouldTry()).toBe(true);
    expect(recheck.markPresent()).toBe(false);
    expect(recheck.markMissing()).toBe(true);
    expect(recheck.shouldTry()).toBe(false);
    now += 59_999;
    expect(recheck.shouldTry()).toBe(false);
    now += 1;
    expect(recheck.shouldTry()).toBe(true);
    expect(recheck.markMissing()).toBe(false);
    expect(recheck.shouldTry()).toBe(false);
    now += 60_000;
    expect(recheck.markPresent()).toBe(true);
    expect(recheck.shouldTry()).toBe(true);
  });
});
