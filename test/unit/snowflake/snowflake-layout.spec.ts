import {
  JS_SAFE_LAYOUT,
  JS_SAFE_LIMIT,
  LEAF_LAYOUT,
  MAX_ID,
  MAX_TIME_DELTA,
  composeId,
  decodeId,
  layoutNamed,
} from '../../../src/snowflake/core/snowflake-layout';
import { DEFAULT_TWEPOCH, LAYOUT_LIMITS, SNOWFLAKE_LAYOUT_NAMES } from '../../../src/config/snowflake-config';

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

describe('js-safe snowflake layout (41-bit ms | 5-bit worker | 7-bit sequence)', () => {
  it('splits 53 bits: 41 + 5 + 7, every ID below 2^53', () => {
    expect(JS_SAFE_LAYOUT.timeBits + JS_SAFE_LAYOUT.workerIdBits + JS_SAFE_LAYOUT.sequenceBits).toBe(53);
    expect(JS_SAFE_LAYOUT.maxId).toBe(2n ** 53n - 1n);
    expect(JS_SAFE_LAYOUT.maxId).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    expect(composeId(JS_SAFE_LAYOUT.maxTimeDelta, 31, 127, JS_SAFE_LAYOUT)).toBe(JS_SAFE_LIMIT - 1n);
  });

  it('meets its targets: at least 60 years, 100,000 IDs per second per worker, 32 workers', () => {
    const years = (JS_SAFE_LAYOUT.maxTimeDelta + 1) / (365.25 * 86_400_000);
    expect(years).toBeGreaterThanOrEqual(60);
    expect(years).toBeLessThan(70);
    expect((JS_SAFE_LAYOUT.maxSequence + 1) * 1000).toBeGreaterThanOrEqual(100_000);
    expect(JS_SAFE_LAYOUT.maxWorkerId + 1).toBeGreaterThanOrEqual(32);
  });

  it('composes worked examples computed by hand', () => {
    // (1 << 12) | (1 << 7) | 1 = 4096 + 128 + 1
    expect(composeId(1, 1, 1, JS_SAFE_LAYOUT)).toBe(4225n);
    // 1000 × 4096 + 5 × 128 + 7
    expect(composeId(1000, 5, 7, JS_SAFE_LAYOUT)).toBe(4096647n);
    expect(composeId(0, 31, 0, JS_SAFE_LAYOUT)).toBe(31n * 128n);
  });

  it('decodes a worked example with the default twepoch', () => {
    // 2020-05-02T12:13:44.602Z is 299586649945 ms after twepoch: 299586649945 × 4096 + 19 × 128 + 18
    const id = 299586649945n * 4096n + 19n * 128n + 18n;
    expect(id).toBe(1227106918177170n);
    expect(decodeId(id, DEFAULT_TWEPOCH, JS_SAFE_LAYOUT)).toEqual({
      timestamp: 1588421624602,
      isoTime: '2020-05-02T12:13:44.602Z',
      workerId: 19,
      sequence: 18,
    });
  });

  it('round-trips random parts and refuses IDs at or above 2^53', () => {
    for (let i = 0; i < 1000; i++) {
      const delta = Math.floor(Math.random() * JS_SAFE_LAYOUT.maxTimeDelta);
      const workerId = Math.floor(Math.random() * 32);
      const sequence = Math.floor(Math.random() * 128);
      const id = composeId(delta, workerId, sequence, JS_SAFE_LAYOUT);
      expect(id).toBeLessThan(JS_SAFE_LIMIT);
      expect(decodeId(id, 0, JS_SAFE_LAYOUT)).toMatchObject({ timestamp: delta, workerId, sequence });
    }
    expect(() => decodeId(JS_SAFE_LIMIT, 0, JS_SAFE_LAYOUT)).toThrow(RangeError);
  });

  it('has the limits the configuration checks (config/snowflake-config.ts LAYOUT_LIMITS)', () => {
    for (const name of SNOWFLAKE_LAYOUT_NAMES) {
      const l = layoutNamed(name);
      expect(l.name).toBe(name);
      expect(LAYOUT_LIMITS[name]).toEqual({ maxWorkerId: l.maxWorkerId, sequences: l.maxSequence + 1 });
    }
    expect(layoutNamed('leaf')).toBe(LEAF_LAYOUT);
  });
});
