/**
 * Leaf's snowflake bit layout: 1 sign bit (always 0) | 41-bit time since twepoch | 10-bit worker
 * id | 12-bit sequence. Pure bigint arithmetic; an ID never passes through `number`.
 */
export const TIMESTAMP_BITS = 41;
export const WORKER_ID_BITS = 10;
export const SEQUENCE_BITS = 12;

export const MAX_WORKER_ID = (1 << WORKER_ID_BITS) - 1; // 1023
export const MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1; // 4095
/** Largest `timestamp - twepoch` that fits 41 bits: 2^41 - 1. */
export const MAX_TIME_DELTA = 2 ** TIMESTAMP_BITS - 1;
export const MAX_ID = (1n << 63n) - 1n;

const WORKER_SHIFT = BigInt(SEQUENCE_BITS);
const TIME_SHIFT = BigInt(SEQUENCE_BITS + WORKER_ID_BITS);

export interface DecodedId {
  /** Milliseconds since 1970. */
  timestamp: number;
  isoTime: string;
  workerId: number;
  sequence: number;
}

/** The ID of (timeDelta, workerId, sequence); each part must already be in range. */
export function composeId(timeDelta: number, workerId: number, sequence: number): bigint {
  return (BigInt(timeDelta) << TIME_SHIFT) | (BigInt(workerId) << WORKER_SHIFT) | BigInt(sequence);
}

/** The worker-id part of an ID, precomputed by the generator. */
export function workerBits(workerId: number): bigint {
  return BigInt(workerId) << WORKER_SHIFT;
}

export function timeBits(timeDelta: number): bigint {
  return BigInt(timeDelta) << TIME_SHIFT;
}

/** Splits a non-negative 63-bit ID into its parts, reading the time relative to `twepoch`. */
export function decodeId(id: bigint, twepoch: number): DecodedId {
  if (id < 0n || id > MAX_ID) {
    throw new RangeError(`id must be 0..${MAX_ID}`);
  }
  const timestamp = Number(id >> TIME_SHIFT) + twepoch;
  return {
    timestamp,
    isoTime: new Date(timestamp).toISOString(),
    workerId: Number((id >> WORKER_SHIFT) & BigInt(MAX_WORKER_ID)),
    sequence: Number(id & BigInt(MAX_SEQUENCE)),
  };
}

export function isValidWorkerId(workerId: number): boolean {
  return Number.isInteger(workerId) && workerId >= 0 && workerId <= MAX_WORKER_ID;
}
