import { Instant, elapsedMs, notAfter } from './number-clock';
import { NumberPattern, formatNumber } from './number-pattern';
import { Period, dateFields } from './period';

/**
 * One reading of the database clock: the instance's clocks just before the query was sent
 * (`anchor`) and when its reply arrived (`reply`), and the database time it returned (`dbMs`, read
 * at some instant between the two).
 */
export interface ClockAnchor {
  anchor: Instant;
  reply: Instant;
  dbMs: number;
}

export interface ValidityOptions {
  /**
   * Kept between the estimated database time and the period's end (ms), for the two clocks' rate
   * difference over a reading's life (configuration requires at least 1000 ppm of `trustMs` + 2 ms).
   */
  marginMs: number;
  /** A reading is trusted this long at most; after that the clock is read again (ms). */
  trustMs: number;
}

/**
 * The database answers its clock truncated to the millisecond (`UTC_TIMESTAMP(3)`): when it said
 * `dbMs` it was up to this much later.
 */
export const DB_CLOCK_STEP_MS = 1;

/**
 * How long after its anchor (ms) a reading proves the database is still in `period`. When m ms
 * passed since the anchor, the database time is at most `dbMs + step + m` (the reading was taken
 * after the anchor, and truncated), so before `(end - dbMs - step) - margin` the period cannot have
 * ended; trusted at most `trustMs`.
 */
export function validForMs(reading: ClockAnchor, period: Period, options: ValidityOptions): number {
  return Math.min(period.endMs - (reading.dbMs + DB_CLOCK_STEP_MS) - options.marginMs, options.trustMs);
}

/** One reading's bound: it proves the period for `validMs` after `anchor`. */
interface Bound {
  anchor: Instant;
  validMs: number;
}

/**
 * A proof that the database was in `period` at some instant: while it holds, a request may act as
 * if that instant were now. It holds for a request that started before the latest reading was sent
 * (the reading happened during the request), or, for any request, while less than `validForMs` of
 * one of its readings passed since that reading's anchor (measured by `elapsedMs`).
 */
export class PeriodProof {
  /** The latest reading: the anchor requests are compared with, and the time printed in numbers. */
  latest: ClockAnchor;
  /** The last two readings' bounds (either one proves the period). */
  private bounds: Bound[];

  constructor(
    readonly period: Period,
    reading: ClockAnchor,
    private readonly options: ValidityOptions,
  ) {
    this.latest = reading;
    this.bounds = [{ anchor: reading.anchor, validMs: validForMs(reading, period, options) }];
  }

  get anchor(): Instant {
    return this.latest.anchor;
  }

  holdsFor(requestStart: Instant, now: Instant): boolean {
    return this.msLeft(now) > 0 || notAfter(requestStart, this.latest.anchor);
  }

  /** How much longer (ms) the proof holds for any request; 0 or less once it does not. */
  msLeft(now: Instant): number {
    return Math.max(...this.bounds.map((b) => b.validMs - elapsedMs(b.anchor, now)));
  }

  /** A newer reading: extends the proof when the period still runs; false once it has ended. */
  confirm(reading: ClockAnchor): boolean {
    if (reading.dbMs >= this.period.endMs) {
      return false;
    }
    if (!notAfter(reading.anchor, this.latest.anchor)) {
      this.latest = reading;
    }
    this.bounds = [...this.bounds, { anchor: reading.anchor, validMs: validForMs(reading, this.period, this.options) }].slice(-2);
    return true;
  }

  /** Ms left until the period's end at the latest (from an upper bound of the database time). */
  msToEnd(now: Instant): number {
    return this.period.endMs - (this.latest.dbMs + DB_CLOCK_STEP_MS + elapsedMs(this.latest.anchor, now));
  }

  /** Database time for printing: the reading plus the time since its reply, kept inside the period. */
  printTime(now: Instant): number {
    const t = this.latest.dbMs + Math.max(0, elapsedMs(this.latest.reply, now));
    return Math.min(Math.max(t, this.period.startMs), this.period.endMs - 1);
  }
}

/** Sequences `next..max` of one period, allocated to this instance, with the proof of the period. */
export class NumberSegment {
  next: bigint;

  constructor(
    readonly pattern: NumberPattern,
    readonly proof: PeriodProof,
    readonly from: bigint,
    readonly max: bigint,
  ) {
    this.next = from;
  }

  get period(): Period {
    return this.proof.period;
  }

  get left(): bigint {
    return this.max >= this.next ? this.max - this.next + 1n : 0n;
  }

  /** More than 10 % of it handed out (Leaf's preload trigger). */
  get pastTenth(): boolean {
    return (this.next - this.from) * 10n > this.max - this.from + 1n;
  }

  /** Leaves nothing to hand out (its period is over, or its format is gone): the rest is a gap. */
  drop(): void {
    this.next = this.max + 1n;
  }

  /** Formats up to `n` numbers into `out`, printed at database time `printTime(now)`; returns how many. */
  takeInto(out: string[], n: number, now: Instant): number {
    const fields = dateFields(this.proof.printTime(now));
    let taken = 0;
    for (; taken < n && this.next <= this.max; taken++) {
      out.push(formatNumber(this.pattern, fields, this.next));
      this.next++;
    }
    return taken;
  }
}
