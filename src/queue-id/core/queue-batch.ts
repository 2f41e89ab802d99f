import { INDEX_SHIFT, composeQueueId, lowBits, parseQueueEntry } from './queue-id-layout';

/**
 * The request path's arithmetic on popped queue entries, in JS numbers where that is exact.
 *
 * An index is at most MAX_INDEX = 2^49 - 1 (every index above a shard's limit is dropped before it
 * is used, and the limit is never above MAX_INDEX), so an accepted index is always exact as a
 * number. The ID `index << 14 | low` is exact as a number while index < 2^39 (then the ID is below
 * 2^53): such IDs are composed and printed with number arithmetic; above it (a shard 549 billion
 * indexes deep) with bigint, as before. The output is the same decimal string either way.
 */

/** Largest index whose ID (`index * 2^14 + low`, low < 2^14) is below 2^53. */
export const MAX_NUMBER_INDEX = 2 ** 39 - 1;
const SHIFT_FACTOR = 2 ** Number(INDEX_SHIFT);

/** An index of up to 15 decimal digits is below 10^15 < 2^53: exact while accumulated. */
export const EXACT_DIGITS = 15;
export const MAX_ENTRY_DIGITS = 16;

export interface AcceptOutcome {
  /** An entry above the shard's limit was dropped: the shard is exhausted. */
  overLimit: boolean;
  /** Entries that were not decimal indexes (dropped). */
  malformed: number;
}

/**
 * Appends the valid indexes of `raw` (in order) to `out`, exactly as the request path always did
 * (parseQueueEntry, then `index > maxIndex` dropped): malformed entries and entries above the limit
 * are dropped, the rest kept. `maxIndex` may be negative (no index allowed).
 */
export function acceptEntries(
  raw: ReadonlyArray<string | Uint8Array>,
  maxIndex: bigint,
  out: number[],
): AcceptOutcome {
  const max = Number(maxIndex);
  let overLimit = false;
  let malformed = 0;
  for (let k = 0; k < raw.length; k++) {
    const entry = raw[k];
    const length = entry.length;
    let n = 0;
    let ok = length > 0 && length <= MAX_ENTRY_DIGITS;
    if (ok && typeof entry !== 'string') {
      for (let i = 0; i < length; i++) {
        const c = entry[i];
        if (c < 48 || c > 57) {
          ok = false;
          break;
        }
        n = n * 10 + (c - 48);
      }
    } else if (ok) {
      for (let i = 0; i < length; i++) {
        const c = (entry as string).charCodeAt(i);
        if (c < 48 || c > 57) {
          ok = false;
          break;
        }
        n = n * 10 + (c - 48);
      }
    }
    if (!ok) {
      malformed++;
      continue;
    }
    if (length > EXACT_DIGITS) {
      // 16 digits: compared exactly as a bigint (n may have been rounded); an accepted one is ≤ MAX_INDEX.
      const exact = parseQueueEntry(entry) as bigint;
      if (exact > maxIndex) {
        overLimit = true;
        continue;
      }
      out.push(Number(exact));
      continue;
    }
    // Entries queued before max_limit_id was lowered are dropped, never returned.
    if (n > max) {
      overLimit = true;
      continue;
    }
    out.push(n);
  }
  return { overLimit, malformed };
}

/** The ID of an accepted index (≤ MAX_INDEX), as composeQueueId. */
export function queueIdOf(index: number, shardId: number, appId: number): bigint {
  return composeQueueId(BigInt(index), shardId, appId);
}

/** The decimal ID of an accepted index: number arithmetic below MAX_NUMBER_INDEX, bigint above. */
export function queueIdString(index: number, low: number, shardId: number, appId: number): string {
  if (index <= MAX_NUMBER_INDEX) {
    return String(index * SHIFT_FACTOR + low);
  }
  return queueIdOf(index, shardId, appId).toString();
}

/**
 * The JSON body of a batch, `{"ids":["…",…]}`, written from the digits (no bigint, no array of
 * strings handed to JSON.stringify): byte for byte what `JSON.stringify({ ids })` gives for the
 * IDs `composeQueueId(index, shardId, appId).toString()` in the same order.
 */
export function batchBody(indexes: readonly number[], shardId: number, appId: number): string {
  const count = indexes.length;
  if (count === 0) {
    return '{"ids":[]}';
  }
  const low = Number(lowBits(appId, shardId));
  const parts = new Array<string>(count);
  for (let k = 0; k < count; k++) {
    const index = indexes[k];
    parts[k] = index <= MAX_NUMBER_INDEX ? String(index * SHIFT_FACTOR + low) : queueIdString(index, low, shardId, appId);
  }
  return `{"ids":["${parts.join('","')}"]}`;
}
