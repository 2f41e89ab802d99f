import { MAX_NUMBER_INDEX, acceptEntries, batchBody } from '../../../src/queue-id/core/queue-batch';
import { MAX_INDEX, composeQueueId, maxIndexFor, parseQueueEntry } from '../../../src/queue-id/core/queue-id-layout';
import { seededRandom as rng } from '../../support/seeded-random';

/** The request path before the batch work: parseQueueEntry, limit check, bigint compose, JSON.stringify. */
function oldPath(raw: ReadonlyArray<string | Uint8Array>, maxIndex: bigint, shardId: number, appId: number) {
  const ids: string[] = [];
  let overLimit = false;
  let malformed = 0;
  for (const entry of raw) {
    const index = parseQueueEntry(entry);
    if (index === undefined) {
      malformed++;
      continue;
    }
    if (index > maxIndex) {
      overLimit = true;
      continue;
    }
    ids.push(composeQueueId(index, shardId, appId).toString());
  }
  return { body: JSON.stringify({ ids }), overLimit, malformed };
}

function newPath(raw: ReadonlyArray<string | Uint8Array>, maxIndex: bigint, shardId: number, appId: number) {
  const out: number[] = [];
  const { overLimit, malformed } = acceptEntries(raw, maxIndex, out);
  return { body: batchBody(out, shardId, appId).toString('latin1'), overLimit, malformed };
}

const MALFORMED = ['', ' 1', '1 ', '-1', '+1', '1.0', '1e3', '0x10', 'abc', '12345678901234567', '١٢', '1,2', '"7"'];

describe('queue batch arithmetic (core/queue-batch.ts)', () => {
  it('gives the same IDs, order, limit and malformed counts as the old path on mixed lists', () => {
    const random = rng(20261123);
    const interesting = [
      0n,
      1n,
      16383n,
      BigInt(MAX_NUMBER_INDEX) - 1n,
      BigInt(MAX_NUMBER_INDEX),
      BigInt(MAX_NUMBER_INDEX) + 1n,
      MAX_INDEX - 1n,
      MAX_INDEX,
      MAX_INDEX + 1n,
      999_999_999_999_999n,
      9_007_199_254_740_993n,
    ];
    for (let round = 0; round < 300; round++) {
      const appId = Math.floor(random() * 256);
      const shardId = Math.floor(random() * 64);
      const entries: Array<string | Uint8Array> = [];
      // Runs of consecutive indexes, with gaps, out of order, duplicated, malformed, over the limit.
      let next = BigInt(Math.floor(random() * 2 ** 40));
      while (entries.length < 1000) {
        const roll = random();
        if (roll < 0.6) {
          const run = 1 + Math.floor(random() * 200);
          for (let i = 0; i < run; i++) {
            entries.push((next + BigInt(i)).toString());
          }
          next += BigInt(run + Math.floor(random() * 50));
        } else if (roll < 0.7) {
          next = BigInt(Math.floor(random() * 2 ** 20));
        } else if (roll < 0.8) {
          entries.push(MALFORMED[Math.floor(random() * MALFORMED.length)]);
        } else if (roll < 0.9) {
          entries.push(interesting[Math.floor(random() * interesting.length)].toString());
        } else {
          // Leading zeros are read as the plain decimal number, as parseQueueEntry does.
          entries.push(`0${Math.floor(random() * 1000)}`);
        }
      }
      const asBytes = entries.map((e) => (typeof e === 'string' && random() < 0.7 ? Buffer.from(e, 'utf8') : e));
      const limits = [0n, 2n ** 41n, 5_000n << 14n, 1n];
      const maxIndex = maxIndexFor(appId, shardId, limits[round % limits.length]);
      expect(newPath(asBytes, maxIndex, shardId, appId)).toEqual(oldPath(asBytes, maxIndex, shardId, appId));
    }
  });

  it('writes exactly JSON.stringify of the decimal IDs on both sides of 2^53', () => {
    const indexes = [0, 1, MAX_NUMBER_INDEX, MAX_NUMBER_INDEX + 1, Number(MAX_INDEX)];
    const expected = JSON.stringify({ ids: indexes.map((i) => composeQueueId(BigInt(i), 63, 255).toString()) });
    expect(batchBody(indexes, 63, 255).toString('latin1')).toBe(expected);
    // The largest number-arithmetic ID is 2^53 - 1 exactly.
    expect(composeQueueId(BigInt(MAX_NUMBER_INDEX), 63, 255)).toBe(2n ** 53n - 1n);
    expect(batchBody([], 1, 1).toString('latin1')).toBe('{"ids":[]}');
  });

  it('writes every digit count and the 10^8 split exactly (IDs 0 … 2^53 - 1)', () => {
    const ids = new Set<bigint>([0n, 2n ** 53n - 1n]);
    for (let d = 1n; d <= 10n ** 16n; d *= 10n) {
      for (const id of [d - 1n, d, d + 1n, d * 9n + 7n, 10n ** 8n * d + 99n, 10n ** 8n * d - 1n]) {
        ids.add(id);
      }
    }
    const random = rng(53);
    for (let i = 0; i < 2000; i++) {
      ids.add(BigInt(Math.floor(random() * 2 ** 53)) >> BigInt(Math.floor(random() * 53)));
    }
    for (const appId of [0, 255]) {
      for (const shardId of [0, 63]) {
        const low = (BigInt(shardId) << 8n) | BigInt(appId);
        // The two indexes whose IDs (with this shard and app) straddle each value: every digit-count change is crossed.
        const indexes = [...ids]
          .filter((id) => id >= low)
          .flatMap((id) => [(id - low) >> 14n, ((id - low) >> 14n) + 1n])
          .filter((i) => i <= BigInt(MAX_NUMBER_INDEX))
          .map(Number);
        const expected = JSON.stringify({ ids: indexes.map((i) => ((BigInt(i) << 14n) | low).toString()) });
        expect(batchBody(indexes, shardId, appId).toString('latin1')).toBe(expected);
      }
    }
  });

  it('drops everything when even index 0 is above the limit', () => {
    const out: number[] = [];
    expect(acceptEntries(['0', '5', 'x'], -1n, out)).toEqual({ overLimit: true, malformed: 1 });
    expect(out).toEqual([]);
  });
});
