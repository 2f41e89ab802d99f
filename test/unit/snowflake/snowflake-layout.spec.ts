import {
  MAX_ID,
  MAX_TIME_DELTA,
  composeId,
  decodeId,
} from '../../../src/snowflake/core/snowflake-layout';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';

describe('snowflake layout', () => {
  it('composes worked examples computed by hand', () => {
    // (1 << 22) | (1 << 12) | 1 = 4194304 + 4096 + 1
    expect(composeId(1, 1, 1)).toBe(4198401n);
    // 1000 × 4194304 + 5 × 4096 + 7
    expect(composeId(1000, 5, 7)).toBe(4194324487n);
    // every bit below the sign bit set
    expect(composeId(MAX_TIME_DELTA, 1023, 4095)).toBe(9223372036854775807n);
    expect(composeId(0, 0, 0)).toBe(0n);
    expect(composeId(0, 1023, 0)).toBe(1023n * 4096n);
  });

  it('decodes the ID of the fork README with the default twepoch', () => {
    // 1256557484213448722 >> 22 = 299586649945 ms after 2010-11-04T01:42:54.657Z
    expect(decodeId(1256557484213448722n, DEFAULT_TWEPOCH)).toEqual({
      timestamp: 1588421624602,
      isoTime: '2020-05-02T12:13:44.602Z',
      workerId: 619,
      sequence: 18,
    });
  });

  it('reads the time relative to the configured twepoch', () => {
    const id = composeId(1000, 3, 9);
    expect(decodeId(id, 0).timestamp).toBe(1000);
    expect(decodeId(id, 1_700_000_000_000).timestamp).toBe(1_700_000_001_000);
  });

  it('round-trips random parts', () => {
    for (let i = 0; i < 1000; i++) {
      const delta = Math.floor(Math.random() * MAX_TIME_DELTA);
      const workerId = Math.floor(Math.random() * 1024);
      const sequence = Math.floor(Math.random() * 4096);
      const id = composeId(delta, workerId, sequence);
      expect(id).toBeGreaterThanOrEqual(0n);
      expect(id).toBeLessThanOrEqual(MAX_ID);
      expect(decodeId(id, DEFAULT_TWEPOCH)).toMatchObject({ timestamp: delta + DEFAULT_TWEPOCH, workerId, sequence });
    }
  });

  it('refuses IDs outside 0..2^63-1', () => {
    expect(() => decodeId(-1n, 0)).toThrow(RangeError);
    expect(() => decodeId(1n << 63n, 0)).toThrow(RangeError);
  });
});
