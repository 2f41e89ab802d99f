/**
 * Splits shardleaf IDs into their parts, without asking a server. Pure bigint arithmetic: an ID
 * is never read through `number`.
 *
 * - queue IDs: `index << 14 | shard << 8 | appId`;
 * - snowflake IDs, layout `leaf` (Leaf's, the default): 41-bit ms since twepoch | 10-bit worker
 *   id | 12-bit sequence; layout `js-safe`: 41-bit ms | 5-bit worker id | 7-bit sequence (below 2^53).
 */
export type SnowflakeLayoutName = 'leaf' | 'js-safe';

/** Leaf's twepoch, the server's default SNOWFLAKE_TWEPOCH: 2010-11-04T01:42:54.657Z. */
export const LEAF_TWEPOCH = 1288834974657;

export interface QueueIdParts {
  /** The position in the shard's sequence (up to 49 bits). */
  index: bigint;
  shard: number;
  appId: number;
}

export interface SnowflakeIdParts {
  /** Milliseconds since 1970. */
  timestamp: number;
  isoTime: string;
  workerId: number;
  sequence: number;
}

export interface SnowflakeDecodeOptions {
  /** The server's SNOWFLAKE_LAYOUT (default `leaf`). */
  layout?: SnowflakeLayoutName;
  /** The server's SNOWFLAKE_TWEPOCH (default Leaf's). */
  twepoch?: number;
}

const BITS: Record<SnowflakeLayoutName, { worker: bigint; sequence: bigint; total: bigint }> = {
  leaf: { worker: 10n, sequence: 12n, total: 63n },
  'js-safe': { worker: 5n, sequence: 7n, total: 53n },
};
const MAX_SIGNED_64 = (1n << 63n) - 1n;

/** An ID as a bigint: a bigint, a decimal string, or a safe-integer number. Throws otherwise. */
export function idToBigInt(id: bigint | string | number): bigint {
  if (typeof id === 'bigint') {
    return id;
  }
  if (typeof id === 'string' && /^[0-9]{1,20}$/.test(id)) {
    return BigInt(id);
  }
  if (typeof id === 'number' && Number.isSafeInteger(id)) {
    return BigInt(id);
  }
  throw new TypeError(`an ID must be a bigint, a decimal string or a safe integer, got ${typeof id === 'string' ? `'${id.slice(0, 40)}'` : String(id)}`);
}

/** The index, shard and appId of a queue ID (0..2^63-1). */
export function decodeQueueId(id: bigint | string | number): QueueIdParts {
  const value = idToBigInt(id);
  if (value < 0n || value > MAX_SIGNED_64) {
    throw new RangeError(`a queue ID must be 0..${MAX_SIGNED_64}, got ${value}`);
  }
  return { index: value >> 14n, shard: Number((value >> 8n) & 63n), appId: Number(value & 255n) };
}

/** The time, worker id and sequence of a snowflake ID of `options.layout`, read with `options.twepoch`. */
export function decodeSnowflakeId(id: bigint | string | number, options: SnowflakeDecodeOptions = {}): SnowflakeIdParts {
  const layout = options.layout ?? 'leaf';
  const bits = BITS[layout];
  if (bits === undefined) {
    throw new RangeError(`layout must be 'leaf' or 'js-safe', got '${String(layout)}'`);
  }
  const twepoch = options.twepoch ?? LEAF_TWEPOCH;
  if (!Number.isSafeInteger(twepoch) || twepoch < 0) {
    throw new RangeError(`twepoch must be a non-negative integer (ms since 1970), got ${twepoch}`);
  }
  const value = idToBigInt(id);
  const max = (1n << bits.total) - 1n;
  if (value < 0n || value > max) {
    throw new RangeError(`a ${layout} snowflake ID must be 0..${max}, got ${value}`);
  }
  const timestamp = Number(value >> (bits.worker + bits.sequence)) + twepoch;
  return {
    timestamp,
    isoTime: new Date(timestamp).toISOString(),
    workerId: Number((value >> bits.sequence) & ((1n << bits.worker) - 1n)),
    sequence: Number(value & ((1n << bits.sequence) - 1n)),
  };
}
