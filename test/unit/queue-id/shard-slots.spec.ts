import { MaxIndexes, SHARD_SLOTS, emptyShardSlots, shardSlot, unallocatedIndexes } from '../../../src/queue-id/core/shard-slots';
import { MAX_INDEX, composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { shardCapacity } from '../../../src/queue-id/core/shard-capacity';

describe('shardSlot', () => {
  it('numbers (app, shard) in (app, shard) order, -1 outside the ID layout', () => {
    expect(shardSlot(0, 0)).toBe(0);
    expect(shardSlot(0, 63)).toBe(63);
    expect(shardSlot(1, 0)).toBe(64);
    expect(shardSlot(255, 63)).toBe(SHARD_SLOTS - 1);
    for (const [app, shard] of [[256, 0], [0, 64], [-1, 0], [0, -1], [1.5, 0], [Number.NaN, 0]]) {
      expect(shardSlot(app, shard)).toBe(-1);
    }
  });
});

describe('emptyShardSlots', () => {
  it('has every slot absent and every value unknown', () => {
    const s = emptyShardSlots();
    expect(s.slotsPerApp).toBe(64);
    expect(s.present.length).toBe(SHARD_SLOTS);
    expect(s.present.every((p) => p === 0)).toBe(true);
    for (const column of [s.queueLength, s.refillSize, s.maxId, s.maxIndex, s.unallocated]) {
      expect(column.length).toBe(SHARD_SLOTS);
      expect(column.every((v) => Number.isNaN(v))).toBe(true);
    }
  });
});

describe('MaxIndexes and unallocatedIndexes', () => {
  /** What shardCapacity says of the same row, as a number. */
  function expected(app: number, shard: number, maxId: bigint, maxLimitId: bigint): number {
    return Number(shardCapacity({ appId: app, shardId: shard, maxId, maxLimitId }, 0).unallocated);
  }

  it('agree with shardCapacity: no limit, a limit, a limit below index 0, max_id past the limit', () => {
    const indexes = new MaxIndexes();
    const cases: Array<[number, number, bigint, bigint]> = [
      [0, 0, 1n, 0n],
      [3, 17, 123_456n, 0n],
      [3, 17, 1_000n, composeQueueId(50_000n, 17, 3)],
      [3, 17, 1_000n, composeQueueId(50_000n, 17, 3) - 1n],
      [200, 63, 5n, 100n],
      [7, 1, 90_000n, composeQueueId(50_000n, 1, 7)],
      [255, 63, MAX_INDEX, 0n],
    ];
    for (const [app, shard, maxId, maxLimitId] of cases) {
      const maxIndex = indexes.of(shardSlot(app, shard), maxLimitId.toString());
      expect(unallocatedIndexes(Number(maxId), maxIndex)).toBe(expected(app, shard, maxId, maxLimitId));
    }
  });

  it("follow a slot's changed max_limit_id", () => {
    const indexes = new MaxIndexes();
    const slot = shardSlot(4, 2);
    expect(indexes.of(slot, '0')).toBe(Number(MAX_INDEX));
    const limit = composeQueueId(999n, 2, 4).toString();
    expect(indexes.of(slot, limit)).toBe(999);
    expect(indexes.of(slot, limit)).toBe(999);
    expect(indexes.of(slot, '0')).toBe(Number(MAX_INDEX));
  });
});
