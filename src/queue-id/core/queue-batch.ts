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

/** The ASCII digits of 00..99, two bytes each. */
const DIGIT_PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');
const ZERO = 0x30;
const EMPTY_BODY = '{"ids":[]}';
const BODY_HEAD = '{"ids":["';
/** The longest ID (below 2^63) and its `","`. */
const MAX_ID_BYTES = 19 + 3;

/** Writes n (an integer, 0 ≤ n < 10^8) at p without leading zeros; returns the position after it. */
function writeSmall(out: Buffer, p: number, n: number): number {
  const length = n < 10_000 ? (n < 100 ? (n < 10 ? 1 : 2) : n < 1000 ? 3 : 4) : n < 1_000_000 ? (n < 100_000 ? 5 : 6) : n < 10_000_000 ? 7 : 8;
  let q = p + length;
  let v = n | 0;
  while (v >= 100) {
    const next = (v / 100) | 0;
    const r = (v - next * 100) << 1;
    v = next;
    out[--q] = DIGIT_PAIRS[r + 1];
    out[--q] = DIGIT_PAIRS[r];
  }
  if (v >= 10) {
    out[q - 1] = DIGIT_PAIRS[(v << 1) + 1];
    out[q - 2] = DIGIT_PAIRS[v << 1];
  } else {
    out[q - 1] = ZERO + v;
  }
  return p + length;
}

/** Writes n (an integer, 0 ≤ n < 10^8) at p as exactly 8 digits. */
function writeEight(out: Buffer, p: number, n: number): void {
  let v = n | 0;
  for (let q = p + 8; q > p; ) {
    const next = (v / 100) | 0;
    const r = (v - next * 100) << 1;
    v = next;
    out[--q] = DIGIT_PAIRS[r + 1];
    out[--q] = DIGIT_PAIRS[r];
  }
}

/**
 * The JSON body of a batch, `{"ids":["…",…]}`, written as bytes into one Buffer from the IDs'
 * digits (no bigint, no string per ID, no JSON.stringify): byte for byte what
 * `JSON.stringify({ ids })` gives for the IDs `composeQueueId(index, shardId, appId).toString()`
 * in the same order. IDs below 2^53 (index ≤ MAX_NUMBER_INDEX) are split into two integers below
 * 10^8 and written with a table of digit pairs; above it, the bigint path as before.
 */
export function batchBody(indexes: readonly number[], shardId: number, appId: number): Buffer {
  const count = indexes.length;
  if (count === 0) {
    return Buffer.from(EMPTY_BODY, 'latin1');
  }
  const low = Number(lowBits(appId, shardId));
  const out = Buffer.allocUnsafe(BODY_HEAD.length + count * MAX_ID_BYTES + 2);
  let p = out.write(BODY_HEAD, 0, 'latin1');
  for (let k = 0; k < count; k++) {
    if (k > 0) {
      out[p++] = 0x22; // "
      out[p++] = 0x2c; // ,
      out[p++] = 0x22; // "
    }
    const index = indexes[k];
    if (index <= MAX_NUMBER_INDEX) {
      const id = index * SHIFT_FACTOR + low;
      if (id < 1e8) {
        p = writeSmall(out, p, id);
      } else {
        const high = Math.floor(id / 1e8);
        p = writeSmall(out, p, high);
        writeEight(out, p, id - high * 1e8);
        p += 8;
      }
    } else {
      p += out.write(queueIdString(index, low, shardId, appId), p, 'latin1');
    }
  }
  out[p++] = 0x22; // "
  out[p++] = 0x5d; // ]
  out[p++] = 0x7d; // }
  return out.subarray(0, p);
}
