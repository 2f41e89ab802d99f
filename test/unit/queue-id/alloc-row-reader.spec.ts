import { AllocRowReader, SHARD_SLOTS, shardSlot } from '../../../src/queue-id/core/alloc-row-reader';
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

describe('AllocRowReader', () => {
  /** What shardCapacity says of the same row, as numbers. */
  function expected(app: number, shard: number, maxId: bigint, maxLimitId: bigint): number {
    return Number(shardCapacity({ appId: app, shardId: shard, maxId, maxLimitId }, 0).unallocated);
  }

  it('agrees with shardCapacity: no limit, a limit, a limit below index 0, max_id past the limit', () => {
    const rows = new AllocRowReader();
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
      const r = rows.read(shardSlot(app, shard), maxId.toString(), maxLimitId.toString());
      expect(r.unallocated).toBe(expected(app, shard, maxId, maxLimitId));
      expect(r.maxId).toBe(Number(maxId));
    }
  });

  it('follows a changed max_limit_id of a slot', () => {
    const rows = new AllocRowReader();
    const slot = shardSlot(4, 2);
    expect(rows.read(slot, '10', '0').maxIndex).toBe(Number(MAX_INDEX));
    const limit = composeQueueId(999n, 2, 4);
    expect(rows.read(slot, '10', limit.toString())).toEqual({ maxId: 10, maxIndex: 999, unallocated: 989 });
    expect(rows.read(slot, '12', limit.toString())).toEqual({ maxId: 12, maxIndex: 999, unallocated: 987 });
    expect(rows.read(slot, '12', '0').unallocated).toBe(Number(MAX_INDEX) - 12);
  });
});
