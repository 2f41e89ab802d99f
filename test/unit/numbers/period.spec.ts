import { allocationPeriod, dateFields, parseDbTime, periodAt, periodOfKey } from '../../../src/numbers/core/period';

const at = (text: string): number => parseDbTime(text);

describe('database clock readings', () => {
  it('reads the database format to the millisecond, as calendar arithmetic (no time zone)', () => {
    expect(at('2026-11-26 23:59:59.999000')).toBe(Date.UTC(2026, 10, 26, 23, 59, 59, 999));
    expect(at('2026-11-26 00:00:00')).toBe(Date.UTC(2026, 10, 26));
    expect(at('2024-02-29 12:00:00.5')).toBe(Date.UTC(2024, 1, 29, 12, 0, 0, 500));
  });

  it.each([null, undefined, '', '2026-11-26', '2026-02-30 00:00:00', '2026-11-26 24:00:00', '0999-01-01 00:00:00', 'x'])(
    'refuses %j',
    (text) => {
      expect(() => parseDbTime(text)).toThrow(/database clock/);
    },
  );
});

describe('reset periods', () => {
  it('daily: the key is yyyyMMdd and the period ends at the next midnight, across months and years', () => {
    expect(periodAt('daily', at('2026-11-26 23:59:59.999'))).toEqual({
      key: '20261126',
      startMs: Date.UTC(2026, 10, 26),
      endMs: Date.UTC(2026, 10, 27),
    });
    expect(periodAt('daily', at('2026-12-31 12:00:00')).endMs).toBe(Date.UTC(2027, 0, 1));
    expect(periodAt('daily', at('2024-02-28 12:00:00')).endMs).toBe(Date.UTC(2024, 1, 29));
    expect(periodAt('daily', at('2026-11-27 00:00:00')).key).toBe('20261127');
  });

  it('monthly, yearly and none', () => {
    expect(periodAt('monthly', at('2026-12-05 01:00:00'))).toEqual({
      key: '202612',
      startMs: Date.UTC(2026, 11, 1),
      endMs: Date.UTC(2027, 0, 1),
    });
    expect(periodAt('yearly', at('2026-12-05 01:00:00'))).toEqual({
      key: '2026',
      startMs: Date.UTC(2026, 0, 1),
      endMs: Date.UTC(2027, 0, 1),
    });
    expect(periodAt('none', at('2026-12-05 01:00:00'))).toEqual({ key: '', startMs: -Infinity, endMs: Infinity });
  });

  it('a key gives back its period; keys of another shape are refused', () => {
    for (const [reset, text] of [
      ['daily', '2024-02-29 10:00:00'],
      ['monthly', '2026-01-31 10:00:00'],
      ['yearly', '2026-07-01 10:00:00'],
      ['none', '2026-07-01 10:00:00'],
    ] as const) {
      const period = periodAt(reset, at(text));
      expect(periodOfKey(reset, period.key)).toEqual(period);
    }
    for (const [reset, key] of [
      ['daily', '20260230'],
      ['daily', '202602'],
      ['monthly', '202613'],
      ['yearly', '26'],
      ['none', '2026'],
    ] as const) {
      expect(() => periodOfKey(reset, key)).toThrow(/period key/);
    }
  });

  it('an allocation never goes back to an earlier period than one already used', () => {
    const before = at('2026-11-26 23:59:59.000');
    expect(allocationPeriod('daily', before, null).key).toBe('20261126');
    expect(allocationPeriod('daily', before, '20261125').key).toBe('20261126');
    // The clock moved back across midnight: the later period stays.
    expect(allocationPeriod('daily', before, '20261127')).toEqual(periodAt('daily', at('2026-11-27 00:00:00')));
  });

  it('prints the date parts', () => {
    expect(dateFields(at('2007-03-04 05:06:07'))).toEqual({ yyyy: '2007', yy: '07', MM: '03', dd: '04', HH: '05' });
  });
});
