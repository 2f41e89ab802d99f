import { Instant } from './number-clock';
import { NumberSegment, PeriodProof } from './number-segment';

/** This instance's state of one key, for the admin API and the dashboard. */
export interface NumberBufferView {
  key: string;
  loading: boolean;
  current: NumberSegmentView | null;
  next: NumberSegmentView | null;
  /** The period this instance knows to be used up, or null. */
  exhaustedPeriod: string | null;
}

export interface NumberSegmentView {
  period: string;
  next: string;
  max: string;
  left: string;
  /** Monotonic ms the segment may still be used without reading the database clock (may be negative). */
  validForMs: number;
}

/** The double buffer of one key: current and next segment, the one allocation and clock reading in flight. */
export class NumberBuffer {
  current: NumberSegment | null = null;
  next: NumberSegment | null = null;
  loading: Promise<void> | null = null;
  reading: Promise<void> | null = null;
  exhausted: PeriodProof | null = null;
  /** Numbers the requests waiting for an allocation of this key still need, summed. */
  demand = 0;

  constructor(readonly key: string) {}

  /** The most recent proof this buffer holds (for the distance to the period's end). */
  latestProof(): PeriodProof | null {
    return this.next?.proof ?? this.current?.proof ?? null;
  }
}

/** A buffer's state for the admin API: its segments' periods, sequences and how long their proofs hold. */
export function bufferView(buffer: NumberBuffer, now: Instant): NumberBufferView {
  return {
    key: buffer.key,
    loading: buffer.loading !== null,
    current: segmentView(buffer.current, now),
    next: segmentView(buffer.next, now),
    exhaustedPeriod: buffer.exhausted?.period.key ?? null,
  };
}

function segmentView(segment: NumberSegment | null, now: Instant): NumberSegmentView | null {
  if (segment === null) {
    return null;
  }
  return {
    period: segment.period.key,
    next: segment.next.toString(),
    max: segment.max.toString(),
    left: segment.left.toString(),
    validForMs: Math.round(segment.proof.msLeft(now)),
  };
}

/**
 * The share of the buffer's latest period's capacity allocated (by every instance) as of this
 * instance's latest allocation in it: the row's max_seq that allocation moved to, over the
 * capacity; 1 once an allocation found the period used up. Lags the database (another instance
 * may have allocated since), never runs ahead of it. Null when the period has ended by the upper
 * bound of the database time (PeriodProof.msToEnd): a quiet instance does not report yesterday's
 * period. Null too before any allocation.
 */
export function periodUsed(buffer: NumberBuffer, now: Instant): number | null {
  if (buffer.exhausted !== null) {
    return buffer.exhausted.msToEnd(now) > 0 ? 1 : null;
  }
  const segment = buffer.next ?? buffer.current;
  if (segment === null || segment.proof.msToEnd(now) <= 0) {
    return null;
  }
  // Millionths in bigint: sequences stay out of `number` (up to 62^10 - 1).
  return Number((segment.max * 1_000_000n) / segment.pattern.capacity) / 1_000_000;
}
