import { QUEUE_SHARD_COUNT, shardOf } from './java-hash';

/** Bit layout of a queue ID: `id = index << 14 | shard << 8 | appId`. */
export const APPID_BYTE_LEN = 8;
export const GATE_PASS_BYTE_LEN = 6;
/** `2 << GATE_PASS_BYTE_LEN - 1` in Java precedence = 2 << 5 = 64. */
export const MAX_GATE_PASS_VALUE = 2 << (GATE_PASS_BYTE_LEN - 1);
export const SHARD_COUNT = MAX_GATE_PASS_VALUE;
if (SHARD_COUNT !== QUEUE_SHARD_COUNT) {
  throw new Error('the client package and the server disagree on the number of shards');
}
export const MAX_APP_ID = (1 << APPID_BYTE_LEN) - 1;
export const INDEX_SHIFT = BigInt(APPID_BYTE_LEN + GATE_PASS_BYTE_LEN);
/** The index has 63 - 14 = 49 bits so that the ID stays a positive signed 64-bit integer. */
export const MAX_INDEX = (1n << (63n - INDEX_SHIFT)) - 1n;
export const MAX_SIGNED_64 = (1n << 63n) - 1n;
/**
 * The largest index whose IDs stay below 2^53 (exact as a JavaScript number) on every shard of
 * every app: 2^39 - 1, since the low 14 bits are below 2^14.
 */
export const JS_SAFE_MAX_INDEX = (1n << (53n - INDEX_SHIFT)) - 1n;

export interface QueueIdParts {
  index: bigint;
  shardId: number;
  appId: number;
}

/** The shard a gatePass lands on, exactly as `Math.abs(gatePass.hashCode()) % 64` in Java (shared with the client). */
export { shardOf };

/** The low 14 bits of every ID of (appId, shardId). */
export function lowBits(appId: number, shardId: number): bigint {
  return BigInt(lowNumber(appId, shardId));
}

/** lowBits as a number. */
export function lowNumber(appId: number, shardId: number): number {
  return (shardId << APPID_BYTE_LEN) | appId;
}

export function composeQueueId(index: bigint, shardId: number, appId: number): bigint {
  if (index < 0n || index > MAX_INDEX) {
    throw new RangeError(`index ${index} outside 0..${MAX_INDEX}`);
  }
  return (index << INDEX_SHIFT) | lowBits(appId, shardId);
}

export function decomposeQueueId(id: bigint): QueueIdParts {
  return {
    index: id >> INDEX_SHIFT,
    shardId: Number((id >> BigInt(APPID_BYTE_LEN)) & BigInt(SHARD_COUNT - 1)),
    appId: Number(id & BigInt(MAX_APP_ID)),
  };
}

/**
 * The largest index whose ID stays `<= maxLimitId` on this shard (`maxLimitId <= 0`: no limit,
 * only the 49-bit index range). May be negative when even index 0 is above the limit.
 */
export function maxIndexFor(appId: number, shardId: number, maxLimitId: bigint): bigint {
  if (maxLimitId <= 0n) {
    return MAX_INDEX;
  }
  const headroom = maxLimitId - lowBits(appId, shardId);
  if (headroom < 0n) {
    return -1n;
  }
  const idx = headroom >> INDEX_SHIFT;
  return idx < MAX_INDEX ? idx : MAX_INDEX;
}

/** An index of up to 15 decimal digits is below 2^53: exact as a JS number while parsing. */
const EXACT_DIGITS = 15;
const MAX_ENTRY_DIGITS = 16;

/**
 * A queue entry (decimal digits, as pushed by a refill) → its index; undefined for anything else
 * (empty, a sign, spaces, more than 16 digits). Reads a Buffer's bytes directly, without making a
 * string first; the index is returned as a bigint (the ID is composed in bigint arithmetic).
 */
export function parseQueueEntry(entry: string | Uint8Array): bigint | undefined {
  const length = entry.length;
  if (length === 0 || length > MAX_ENTRY_DIGITS) {
    return undefined;
  }
  let n = 0;
  if (typeof entry === 'string') {
    for (let i = 0; i < length; i++) {
      const c = entry.charCodeAt(i);
      if (c < 48 || c > 57) {
        return undefined;
      }
      n = n * 10 + (c - 48);
    }
    return length <= EXACT_DIGITS ? BigInt(n) : BigInt(entry);
  }
  for (let i = 0; i < length; i++) {
    const c = entry[i];
    if (c < 48 || c > 57) {
      return undefined;
    }
    n = n * 10 + (c - 48);
  }
  return length <= EXACT_DIGITS ? BigInt(n) : BigInt(String.fromCharCode(...entry));
}
