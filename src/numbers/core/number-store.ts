import { ResetPeriod } from './period';

/** What one allocation asks for: at least `wanted` numbers; `exact` = exactly that many (near a period end). */
export interface AllocationRequest {
  wanted: number;
  exact: boolean;
}

/** The format as an allocation read it, with the database clock read under the format's row lock. */
interface AllocationBase {
  pattern: string;
  reset: ResetPeriod;
  /** The period key the allocation used (periodAt of the clock, or a later one already used). */
  period: string;
  /** The database clock, `YYYY-MM-DD HH:MM:SS.ffffff`. */
  dbNow: string;
}

export type Allocation =
  /** Sequences `from..to` (inclusive) of `period` belong to this caller alone. */
  | (AllocationBase & { kind: 'allocated'; from: bigint; to: bigint })
  /** The period's sequence space is used up; nothing was allocated. */
  | (AllocationBase & { kind: 'exhausted' })
  | { kind: 'not-found' };

export interface ClockReading {
  /** The database clock, `YYYY-MM-DD HH:MM:SS.ffffff`. */
  dbNow: string;
  /** The format's definition, or null when it no longer exists. */
  format: { pattern: string; reset: ResetPeriod } | null;
}

/**
 * The number generator's port to the database. `allocate` advances the (key, period) sequence in
 * one transaction that reads the database clock after locking the format's row, so every
 * instance's allocations of a key are ordered by that lock and never overlap. `readClock` is one
 * read of the database clock (and whether the format still exists), nothing written.
 */
export interface NumberStore {
  allocate(key: string, request: AllocationRequest): Promise<Allocation>;
  readClock(key: string): Promise<ClockReading>;
}

/** Share of a period's sequence space one segment may take at most: 1 %, at least one number. */
const SEGMENT_SHARE = 100n;

/**
 * How many sequences one allocation takes: the demand when `exact`, else at least the format's
 * step; never more than 1 % of the period's space (so a small space, say `{seq:2}`, is not held by
 * one instance while another answers "exhausted"), never less than one.
 */
export function segmentSize(step: number, request: AllocationRequest, capacity: bigint): bigint {
  const wanted = BigInt(Math.max(1, request.wanted));
  const size = request.exact ? wanted : wanted > BigInt(step) ? wanted : BigInt(step);
  const cap = capacity / SEGMENT_SHARE > 0n ? capacity / SEGMENT_SHARE : 1n;
  return size < cap ? size : cap;
}
