import {
  JS_SAFE_MAX_INDEX,
  MAX_GATE_PASS_VALUE,
  MAX_INDEX,
  composeQueueId,
  decomposeQueueId,
  maxIndexFor,
} from '../../../src/queue-id/core/queue-id-layout';

describe('queue ID layout: index << 14 | shard << 8 | appId', () => {
  it('keeps every ID below 2^53 up to index 2^39 - 1 (JS_SAFE_MAX_INDEX), on any shard of any app', () => {
    expect(JS_SAFE_MAX_INDEX).toBe(549755813887n);
    expect(composeQueueId(JS_SAFE_MAX_INDEX, 63, 255)).toBe(2n ** 53n - 1n);
    expect(composeQueueId(JS_SAFE_MAX_INDEX + 1n, 0, 0)).toBe(2n ** 53n);
  });

  it('has 64 shards, as 2 << GATE_PASS_BYTE_LEN - 1 in Java', () => {
    expect(MAX_GATE_PASS_VALUE).toBe(64);
  });

  // Worked by hand: 1 << 14 = 16384; 5 << 8 = 1280; 16384 + 1280 + 7 = 17671.
  it('composes index 1, shard 5, app 7 as 17671', () => {
    expect(composeQueueId(1n, 5, 7)).toBe(17671n);
  });

  // 1000 * 16384 = 16384000; 63 << 8 = 16128; + 255 → 16400383.
  it('composes index 1000, shard 63, app 255 as 16400383', () => {
    expect(composeQueueId(1000n, 63, 255)).toBe(16400383n);
  });

  // The first ID of appId 1 for gatePass "alice" (shard 0) after alloc_initData: 16384 + 1.
  it('composes the first ID of app 1 shard 0 as 16385', () => {
    expect(composeQueueId(1n, 0, 1)).toBe(16385n);
  });

  it('stays exact above 2^53 (bigint, not number)', () => {
    // (2^40 + 3) * 2^14 + (9 << 8) + 42 = 18014398509481984 + 49152 + 2304 + 42
    expect(composeQueueId((1n << 40n) + 3n, 9, 42)).toBe(18014398509533482n);
    expect(composeQueueId((1n << 40n) + 3n, 9, 42).toString()).toBe('18014398509533482');
  });

  it('keeps the largest index positive in a signed 64-bit integer', () => {
    const id = composeQueueId(MAX_INDEX, 63, 255);
    expect(id).toBe((1n << 63n) - 1n);
    expect(() => composeQueueId(MAX_INDEX + 1n, 0, 0)).toThrow(RangeError);
  });

  it('decomposes what it composes', () => {
    for (const [index, shard, app] of [
      [0n, 0, 0],
      [123456789n, 17, 200],
      [MAX_INDEX, 63, 255],
    ] as const) {
      expect(decomposeQueueId(composeQueueId(index, shard, app))).toEqual({ index, shardId: shard, appId: app });
    }
  });
});

describe('maxIndexFor (max_limit_id)', () => {
  it('is the 49-bit range without a limit', () => {
    expect(maxIndexFor(1, 0, 0n)).toBe(MAX_INDEX);
  });

  // limit 4294967295 (unsigned int), app 1 shard 0: (4294967295 - 1) >> 14 = 262143;
  // 262143 << 14 | 1 = 4294950913 <= limit, 262144 << 14 | 1 = 4294967297 > limit.
  it('keeps the ID of the largest index at or below the limit', () => {
    const idx = maxIndexFor(1, 0, 4294967295n);
    expect(idx).toBe(262143n);
    expect(composeQueueId(idx, 0, 1)).toBeLessThanOrEqual(4294967295n);
    expect(composeQueueId(idx + 1n, 0, 1)).toBeGreaterThan(4294967295n);
  });

  it('is negative when even index 0 is above the limit', () => {
    expect(maxIndexFor(255, 63, 100n)).toBe(-1n);
  });
});
