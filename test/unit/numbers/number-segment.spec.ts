import { Instant } from '../../../src/numbers/core/number-clock';
import { PeriodProof } from '../../../src/numbers/core/number-segment';
import { parseDbTime, periodAt } from '../../../src/numbers/core/period';

const at = (ms: number): Instant => ({ mono: ms, wall: 1_700_000_000_000 + ms });

describe('PeriodProof', () => {
  const day = periodAt('daily', parseDbTime('2026-11-26 12:00:00'));

  it('counts the database clock as up to 1 ms later than it answered (NOW(3) truncates)', () => {
    // The database answered 23:59:59.998; it may have been 23:59:59.998999.
    const proof = new PeriodProof(day, { anchor: at(0), reply: at(0), dbMs: day.endMs - 2 }, { marginMs: 0, trustMs: 60_000 });
    expect(proof.msLeft(at(0.5))).toBeGreaterThan(0);
    expect(proof.msLeft(at(1.5))).toBeLessThanOrEqual(0);
    expect(proof.msToEnd(at(0))).toBe(1);
  });

  it('holds for the margin less than the time to the end, and never longer than the trust', () => {
    const options = { marginMs: 1000, trustMs: 60_000 };
    const near = new PeriodProof(day, { anchor: at(0), reply: at(5), dbMs: day.endMs - 10_000 }, options);
    expect(near.msLeft(at(0))).toBe(10_000 - 1 - 1000);
    const far = new PeriodProof(day, { anchor: at(0), reply: at(5), dbMs: day.startMs }, options);
    expect(far.msLeft(at(0))).toBe(60_000);
    // A suspended machine: the monotonic clock stood still, the wall clock ran 2 minutes.
    expect(far.msLeft({ mono: 1, wall: at(0).wall + 120_000 })).toBeLessThan(0);
  });
});
