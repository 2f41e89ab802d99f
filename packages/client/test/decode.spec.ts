import { LEAF_TWEPOCH, decodeQueueId, decodeSnowflakeId, idToBigInt } from '../src/decode';
import { MAX_SAFE_ID, toSafeNumber } from '../src/safe-number';

describe('decode', () => {
  it('splits a queue ID into index, shard and appId (worked example)', () => {
    // 12345 << 14 | 37 << 8 | 7 = 202260480 + 9472 + 7
    expect(decodeQueueId(202269959n)).toEqual({ index: 12345n, shard: 37, appId: 7 });
    expect(decodeQueueId('202269959')).toEqual({ index: 12345n, shard: 37, appId: 7 });
    expect(decodeQueueId((1n << 63n) - 1n)).toEqual({ index: (1n << 49n) - 1n, shard: 63, appId: 255 });
  });

  it('splits a Leaf-layout snowflake ID (the Leaf fork README example)', () => {
    expect(decodeSnowflakeId('1256557484213448722')).toEqual({
      timestamp: 1588421624602,
      isoTime: '2020-05-02T12:13:44.602Z',
      workerId: 619,
      sequence: 18,
    });
  });

  it('splits a js-safe snowflake ID (41-bit ms | 5-bit worker | 7-bit sequence), given as a number too', () => {
    const parts = { timestamp: 1588421624602, isoTime: '2020-05-02T12:13:44.602Z', workerId: 19, sequence: 18 };
    expect(decodeSnowflakeId(1227106918177170n, { layout: 'js-safe' })).toEqual(parts);
    expect(decodeSnowflakeId(1227106918177170, { layout: 'js-safe', twepoch: LEAF_TWEPOCH })).toEqual(parts);
    expect(decodeSnowflakeId(4225n, { layout: 'js-safe', twepoch: 0 })).toMatchObject({ timestamp: 1, workerId: 1, sequence: 1 });
  });

  it('refuses what is not an ID of the layout', () => {
    expect(() => decodeSnowflakeId(1n << 53n, { layout: 'js-safe' })).toThrow(RangeError);
    expect(() => decodeSnowflakeId(1n << 63n)).toThrow(RangeError);
    expect(() => decodeSnowflakeId(-1n)).toThrow(RangeError);
    expect(() => decodeQueueId(1n << 63n)).toThrow(RangeError);
    expect(() => decodeSnowflakeId(1n, { layout: 'other' as 'leaf' })).toThrow(RangeError);
    expect(() => idToBigInt('12a')).toThrow(TypeError);
    expect(() => idToBigInt(2 ** 53)).toThrow(TypeError);
    expect(() => idToBigInt(1.5)).toThrow(TypeError);
  });
});

describe('toSafeNumber', () => {
  it('gives the exact number up to 2^53 - 1 and throws above instead of rounding', () => {
    expect(toSafeNumber(0n)).toBe(0);
    expect(toSafeNumber(MAX_SAFE_ID)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => toSafeNumber(MAX_SAFE_ID + 1n)).toThrow(RangeError);
    expect(() => toSafeNumber(1256557484213448722n)).toThrow(/lose its precision/);
    expect(() => toSafeNumber(-1n)).toThrow(RangeError);
  });
});
