/**
 * Snowflake bit layouts. Pure bigint arithmetic; an ID never passes through `number`.
 *
 * - `leaf` (the default, Leaf's): 1 sign bit (always 0) | 41-bit ms since twepoch | 10-bit worker
 *   id | 12-bit sequence. 1,024 workers, 4,096 IDs per ms each, about 69.7 years.
 * - `js-safe`: every ID below 2^53, so a JavaScript `number` holds it exactly: 41-bit ms since
 *   twepoch | 5-bit worker id | 7-bit sequence. The same 69.7 years and millisecond resolution,
 *   32 workers, 128 IDs per ms (128,000 per second) each.
 */
export type SnowflakeLayoutName = 'leaf' | 'js-safe';

export interface SnowflakeLayout {
  readonly name: SnowflakeLayoutName;
  readonly timeBits: number;
  readonly workerIdBits: number;
  readonly sequenceBits: number;
  /** Largest worker id: 2^workerIdBits - 1. */
  readonly maxWorkerId: number;
  /** Largest sequence: 2^sequenceBits - 1. */
  readonly maxSequence: number;
  /** Largest `timestamp - twepoch`: 2^timeBits - 1. */
  readonly maxTimeDelta: number;
  /** Largest ID of the layout (every bit set). */
  readonly maxId: bigint;
  readonly workerShift: bigint;
  readonly timeShift: bigint;
}

function layout(name: SnowflakeLayoutName, timeBits: number, workerIdBits: number, sequenceBits: number): SnowflakeLayout {
  const total = timeBits + workerIdBits + sequenceBits;
  return {
    name,
    timeBits,
    workerIdBits,
    sequenceBits,
    maxWorkerId: 2 ** workerIdBits - 1,
    maxSequence: 2 ** sequenceBits - 1,
    maxTimeDelta: 2 ** timeBits - 1,
    maxId: (1n << BigInt(total)) - 1n,
    workerShift: BigInt(sequenceBits),
    timeShift: BigInt(sequenceBits + workerIdBits),
  };
}

export const LEAF_LAYOUT = layout('leaf', 41, 10, 12);
export const JS_SAFE_LAYOUT = layout('js-safe', 41, 5, 7);

export function layoutNamed(name: SnowflakeLayoutName): SnowflakeLayout {
  return name === 'js-safe' ? JS_SAFE_LAYOUT : LEAF_LAYOUT;
}

/** Leaf's constants (the default layout). */
export const TIMESTAMP_BITS = LEAF_LAYOUT.timeBits;
export const WORKER_ID_BITS = LEAF_LAYOUT.workerIdBits;
export const SEQUENCE_BITS = LEAF_LAYOUT.sequenceBits;
export const MAX_WORKER_ID = LEAF_LAYOUT.maxWorkerId; // 1023
export const MAX_SEQUENCE = LEAF_LAYOUT.maxSequence; // 4095
/** Largest `timestamp - twepoch` that fits 41 bits: 2^41 - 1. */
export const MAX_TIME_DELTA = LEAF_LAYOUT.maxTimeDelta;
/** Largest ID any layout produces: 2^63 - 1 (a positive signed 64-bit integer). */
export const MAX_ID = LEAF_LAYOUT.maxId;
/** 2^53: every js-safe ID is below it. */
export const JS_SAFE_LIMIT = 1n << 53n;

export interface DecodedId {
  /** Milliseconds since 1970. */
  timestamp: number;
  isoTime: string;
  workerId: number;
  sequence: number;
}

/** The ID of (timeDelta, workerId, sequence); each part must already be in range. */
export function composeId(timeDelta: number, workerId: number, sequence: number, l: SnowflakeLayout = LEAF_LAYOUT): bigint {
  return (BigInt(timeDelta) << l.timeShift) | (BigInt(workerId) << l.workerShift) | BigInt(sequence);
}

/** The worker-id part of an ID, precomputed by the generator. */
export function workerBits(workerId: number, l: SnowflakeLayout = LEAF_LAYOUT): bigint {
  return BigInt(workerId) << l.workerShift;
}

export function timeBits(timeDelta: number, l: SnowflakeLayout = LEAF_LAYOUT): bigint {
  return BigInt(timeDelta) << l.timeShift;
}

/** Splits an ID of the layout into its parts, reading the time relative to `twepoch`. */
export function decodeId(id: bigint, twepoch: number, l: SnowflakeLayout = LEAF_LAYOUT): DecodedId {
  if (id < 0n || id > l.maxId) {
    throw new RangeError(`id must be 0..${l.maxId} in the ${l.name} layout`);
  }
  const timestamp = Number(id >> l.timeShift) + twepoch;
  return {
    timestamp,
    isoTime: new Date(timestamp).toISOString(),
    workerId: Number((id >> l.workerShift) & BigInt(l.maxWorkerId)),
    sequence: Number(id & BigInt(l.maxSequence)),
  };
}

export function isValidWorkerId(workerId: number, l: SnowflakeLayout = LEAF_LAYOUT): boolean {
  return Number.isInteger(workerId) && workerId >= 0 && workerId <= l.maxWorkerId;
}
