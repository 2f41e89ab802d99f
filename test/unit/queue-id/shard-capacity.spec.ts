import { MAX_INDEX, lowBits } from '../../../src/queue-id/core/queue-id-layout';
import { appCapacity, shardCapacity } from '../../../src/queue-id/core/shard-capacity';

describe('shardCapacity', () => {
  it('counts queued plus the indexes not yet allocated under max_limit_id', () => {
    // Shard 2 of app 5 with a limit at index 1000: 990 allocated, 4 of them still queued.
    const maxLimitId = (1000n << 14n) | lowBits(5, 2);
    expect(shardCapacity({ appId: 5, shardId: 2, maxId: 990n, maxLimitId }, 4)).toEqual({ unallocated: 10n, remaining: 14n });
  });

  it('uses the whole 49-bit index range without a limit', () => {
    expect(shardCapacity({ appId: 5, shardId: 2, maxId: 1n, maxLimitId: 0n }, 0)).toEqual({
      unallocated: MAX_INDEX - 1n,
      remaining: MAX_INDEX - 1n,
    });
  });

  it('has only the queue left once the limit is allocated, nothing below the shard', () => {
    const maxLimitId = (1000n << 14n) | lowBits(5, 2);
    expect(shardCapacity({ appId: 5, shardId: 2, maxId: 1000n, maxLimitId }, 3)).toEqual({ unallocated: 0n, remaining: 3n });
    // A limit below the shard's low bits: the shard never had an index.
    expect(shardCapacity({ appId: 5, shardId: 63, maxId: 1n, maxLimitId: lowBits(5, 62) }, 0)).toEqual({ unallocated: 0n, remaining: 0n });
  });
});

describe('appCapacity', () => {
  it('sums the shards and counts those with nothing left', () => {
    expect(
      appCapacity([
        { unallocated: 10n, remaining: 14n },
        { unallocated: 0n, remaining: 0n },
        { unallocated: 0n, remaining: 3n },
        { unallocated: 0n, remaining: 0n },
      ]),
    ).toEqual({ remaining: 17n, exhaustedShards: 2 });
  });

  it('is empty for an app without shards', () => {
    expect(appCapacity([])).toEqual({ remaining: 0n, exhaustedShards: 0 });
  });
});
