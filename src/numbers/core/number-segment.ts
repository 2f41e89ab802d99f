import { NumberPattern, formatNumber } from './number-pattern';
import { Period, dateFields } from './period';

/**
 * One reading of the database clock: the instance's monotonic time just before the query was
 * sent (`anchor`) and when its reply arrived (`reply`), and the database local time it returned
 * (`dbMs`, read at some instant between the two).
 */
export interface ClockAnchor {
  anchor: number;
  reply: number;
  dbMs: number;
}

export interface ValidityOptions {
  /** Kept between the estimated database time and the period's end, for clock rate drift (ms). */
  marginMs: number;
  /** A reading is trusted this long at most; after that the clock is read again (ms). */
  trustMs: number;
}

/**
 * Until when (monotonic ms) a reading proves the database is still in `period`. At monotonic time
 * m the database time is at most `dbMs + (m - anchor)` (the reading was taken after `anchor`), so
 * before `anchor + (end - dbMs) - margin` the period cannot have ended; trusted at most `trustMs`.
 */
export function validUntil(reading: ClockAnchor, period: Period, options: ValidityOptions): number {
  const toEnd = period.endMs - reading.dbMs - options.marginMs;
  return reading.anchor + Math.min(toEnd, options.trustMs);
}

/**
 * A proof that the database was in `period` at some instant: while it holds, a request may act as
 * if that instant were now. It holds for a request that started before the reading was sent (the
 * reading happened during the request), or until `validUntil` for any request.
 */
export class PeriodProof {
  anchor: number;
  until: number;
  /** The latest reading, for the time printed in numbers. */
  latest: ClockAnchor;

  constructor(
    readonly period: Period,
    reading: ClockAnchor,
    private readonly options: ValidityOptions,
  ) {
    this.anchor = reading.anchor;
    this.until = validUntil(reading, period, options);
    this.latest = reading;
  }

  holdsFor(requestStart: number, now: number): boolean {
    return now < this.until || requestStart <= this.anchor;
  }

  /** A newer reading: extends the proof when the period still runs; false once it has ended. */
  confirm(reading: ClockAnchor): boolean {
    if (reading.dbMs >= this.period.endMs) {
      return false;
    }
    if (reading.anchor > this.anchor) {
      this.anchor = reading.anchor;
      this.latest = reading;
    }
    this.until = Math.max(this.until, validUntil(reading, this.period, this.options));
    return true;
  }

  /** Monotonic ms left until the period's end at the latest (an upper bound of database time). */
  msToEnd(now: number): number {
    return this.period.endMs - (this.latest.dbMs + (now - this.latest.anchor));
  }

  /** Database local time for printing: the reading plus time since its reply, kept inside the period. */
  printTime(now: number): number {
    const t = this.latest.dbMs + Math.max(0, now - this.latest.reply);
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
  takeInto(out: string[], n: number, now: number): number {
    const fields = dateFields(this.proof.printTime(now));
    let taken = 0;
    for (; taken < n && this.next <= this.max; taken++) {
      out.push(formatNumber(this.pattern, fields, this.next));
      this.next++;
    }
    return taken;
  }
}
