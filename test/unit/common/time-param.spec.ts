import { IdGenError } from '../../../src/common/id-gen.error';
import { parseTimeParam } from '../../../src/common/input';

describe('parseTimeParam (the "ID at time" query)', () => {
  it.each([
    ['2026-11-26T09:00:00Z', '2026-11-26T09:00:00.000Z'],
    ['2026-11-26T17:00:00+08:00', '2026-11-26T09:00:00.000Z'],
    ['2026-11-26T09:00Z', '2026-11-26T09:00:00.000Z'],
    ['2028-02-29T23:59:59.999Z', '2028-02-29T23:59:59.999Z'],
    ['1795683600000', '2026-11-26T09:00:00.000Z'],
  ])('reads %s', (raw, iso) => {
    expect(parseTimeParam('time', raw).toISOString()).toBe(iso);
  });

  it.each(['2026-02-30T00:00:00Z', '2027-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-26T24:00:00Z', '2026-11-26T23:60:00Z', '2026-13-01T00:00:00Z', '2026-11-26T09:00:00+24:00', '2026-11-26T09:00:00'])(
    'refuses %s (a date or time that does not exist, as written) with BAD_INPUT',
    (raw) => {
      expect(() => parseTimeParam('time', raw)).toThrow(IdGenError);
    },
  );
});
