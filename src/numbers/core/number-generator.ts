import { NumberBuffer, NumberBufferView, bufferView, periodUsed } from './number-buffer';
import { FRUITLESS_CALLS, exhaustedError, noProgress, notFound } from './number-errors';
import { Instant, elapsedMs } from './number-clock';
import { NumberPattern, parsePattern } from './number-pattern';
import { ClockAnchor, NumberSegment, PeriodProof } from './number-segment';
import { NumberEvent, NumberGeneratorOptions } from './number-generator-options';
import { NumberStore } from './number-store';
import { parseDbTime, periodOfKey } from './period';

export type { NumberBufferView, NumberSegmentView } from './number-buffer';
export type { NumberEvent, NumberGeneratorOptions } from './number-generator-options';

const MAX_MISSES = 10_000;
/** Share of NUMBER_CLOCK_TRUST_MS left of a proof below which the clock is read in the background. */
const REFRESH_SHARE = 0.2;

/**
 * Formatted numbers from segments per (key, period), double-buffered like Leaf's segment mode.
 * The period is decided by the database clock, never by this instance's: a segment carries its
 * period and a proof that the database is still in it (PeriodProof). A number is handed out only
 * while that proof holds for the request, so once any instance allocated in a new period, no
 * request that starts afterwards gets a number of the old one. A proof expires conservatively
 * before the period's end (or after `trustMs`); the clock is then read again, which costs no
 * numbers. Framework-free: the database is the NumberStore port, time the InstanceClock.
 */
export class NumberGenerator {
  private readonly buffers = new Map<string, NumberBuffer>();
  /** Keys the database said are unknown, and when it said so. */
  private readonly misses = new Map<string, Instant>();
  private readonly patterns = new Map<string, NumberPattern>();
  private readonly emit: (event: NumberEvent) => void;
  private closed = false;

  constructor(
    private readonly store: NumberStore,
    private readonly options: NumberGeneratorOptions,
  ) {
    this.emit = options.onEvent ?? (() => undefined);
  }

  /** `count` numbers of `key`. Throws IdGenError: not found (404), exhausted (410); or a backend error. */
  async next(key: string, count: number): Promise<string[]> {
    const clock = this.options.clock;
    const start = clock.now();
    const miss = this.misses.get(key);
    if (miss !== undefined && elapsedMs(miss, start) < (this.options.missCacheMs ?? 1000)) {
      throw notFound(key);
    }
    const buffer = this.bufferOf(key);
    const out: string[] = [];
    // This request's part of buffer.demand: what it still waits for from an allocation.
    let waiting = 0;
    let fruitless = 0;
    const waitFor = async (call: () => Promise<void>): Promise<void> => {
      if (++fruitless > FRUITLESS_CALLS) {
        throw noProgress(key);
      }
      await call();
    };
    try {
      while (out.length < count) {
        const segment = buffer.current;
        if (segment !== null && segment.left > 0n) {
          const now = clock.now();
          if (segment.proof.holdsFor(start, now)) {
            const taken = segment.takeInto(out, count - out.length, now);
            fruitless = 0;
            const settled = Math.min(waiting, taken);
            waiting -= settled;
            buffer.demand -= settled;
            this.maybePreload(buffer, now);
            this.maybeConfirm(buffer, now);
          } else {
            await waitFor(() => this.readClock(buffer));
          }
          continue;
        }
        if (buffer.next !== null) {
          buffer.current = buffer.next;
          buffer.next = null;
          continue;
        }
        const exhausted = buffer.exhausted;
        if (exhausted !== null) {
          if (exhausted.holdsFor(start, clock.now())) {
            throw exhaustedError(key, exhausted);
          }
          buffer.exhausted = null;
        }
        if (waiting === 0) {
          waiting = count - out.length;
          buffer.demand += waiting;
        }
        await waitFor(() => this.load(buffer));
      }
    } finally {
      buffer.demand -= waiting;
    }
    this.emit({ kind: 'issued', key, count });
    return out;
  }

  /**
   * Starts no more preloads; resolves once the allocations and clock readings in flight settled
   * (each time-bounded by the store), so none is cut by the database pool closing. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.buffers.values()].flatMap((b) => [b.loading, b.reading]).filter((p) => p !== null);
    await Promise.allSettled(pending);
  }

  /** After an admin create on this instance: forget that the key was unknown. */
  forgetMiss(key: string): void {
    this.misses.delete(key);
  }

  /** After an admin delete on this instance: hand out nothing more of the key's segments. */
  drop(key: string): void {
    const buffer = this.buffers.get(key);
    if (buffer) {
      this.forget(buffer);
    }
  }

  views(): NumberBufferView[] {
    return [...this.buffers.keys()].sort().map((key) => this.view(key) as NumberBufferView);
  }

  /** Per key, the share of its running period allocated (number-buffer.ts periodUsed); none once it ended. */
  periodUse(): Array<{ key: string; used: number }> {
    const now = this.options.clock.now();
    return [...this.buffers.keys()].sort().flatMap((key) => {
      const used = periodUsed(this.buffers.get(key) as NumberBuffer, now);
      return used === null ? [] : [{ key, used }];
    });
  }

  view(key: string): NumberBufferView | null {
    const buffer = this.buffers.get(key);
    return buffer ? bufferView(buffer, this.options.clock.now()) : null;
  }

  private bufferOf(key: string): NumberBuffer {
    let buffer = this.buffers.get(key);
    if (!buffer) {
      buffer = new NumberBuffer(key);
      this.buffers.set(key, buffer);
    }
    return buffer;
  }

  private maybePreload(buffer: NumberBuffer, now: Instant): void {
    const current = buffer.current;
    if (this.closed || current === null || buffer.next !== null || buffer.loading !== null || !current.pastTenth) {
      return;
    }
    if (current.proof.msToEnd(now) < this.options.boundaryWindowMs) {
      return;
    }
    // In the background; whoever runs out awaits the same promise and sees its error.
    this.load(buffer).catch(() => undefined);
  }

  /**
   * Reads the database clock in the background once the current segment's proof has less than
   * REFRESH_SHARE of the trust left, so requests seldom wait for a reading; not when the period's
   * end limits the proof (a reading then would not hold longer: near the end requests wait).
   */
  private maybeConfirm(buffer: NumberBuffer, now: Instant): void {
    const proof = buffer.current?.proof;
    if (this.closed || proof === undefined || buffer.reading !== null) {
      return;
    }
    const share = this.options.trustMs * REFRESH_SHARE;
    const left = proof.msLeft(now);
    const fresh = Math.min(proof.msToEnd(now) - this.options.marginMs, this.options.trustMs);
    if (left < share && fresh - left > share) {
      this.readClock(buffer).catch(() => undefined);
    }
  }

  /**
   * The one allocation in flight for this buffer (a preload, or callers that ran out). It asks for
   * the summed demand of the requests waiting when it starts (at least one number); those that come
   * while it runs wait for it and then start the next with theirs.
   */
  private load(buffer: NumberBuffer): Promise<void> {
    if (buffer.loading === null) {
      buffer.loading = this.allocate(buffer, Math.max(1, buffer.demand)).finally(() => {
        buffer.loading = null;
      });
    }
    return buffer.loading;
  }

  private async allocate(buffer: NumberBuffer, wanted: number): Promise<void> {
    const clock = this.options.clock;
    const proof = buffer.latestProof();
    const exact = proof !== null && proof.msToEnd(clock.now()) < this.options.boundaryWindowMs;
    const anchor = clock.now();
    let result;
    try {
      result = await this.store.allocate(buffer.key, { wanted, exact });
    } catch (err) {
      this.emit({ kind: 'allocation', outcome: 'failed', size: 0n });
      throw err;
    }
    const reply = clock.now();
    if (result.kind === 'not-found') {
      this.emit({ kind: 'allocation', outcome: 'not_found', size: 0n });
      this.forget(buffer);
      throw notFound(buffer.key);
    }
    const reading: ClockAnchor = { anchor, reply, dbMs: parseDbTime(result.dbNow) };
    const fresh = new PeriodProof(periodOfKey(result.reset, result.period), reading, this.options);
    if (result.kind === 'exhausted') {
      this.emit({ kind: 'allocation', outcome: 'exhausted', size: 0n });
      buffer.exhausted = fresh;
      throw exhaustedError(buffer.key, fresh);
    }
    this.emit({ kind: 'allocation', outcome: 'allocated', size: result.to - result.from + 1n });
    const segment = new NumberSegment(this.patternOf(result.pattern), fresh, result.from, result.to);
    // A segment of a later period: the database has left the earlier one, whatever is left of it is a gap.
    for (const held of [buffer.current, buffer.next]) {
      if (held !== null && held.period.key < segment.period.key) {
        held.drop();
      }
    }
    if (buffer.current !== null && buffer.current.left > 0n) {
      buffer.next = segment;
    } else {
      buffer.current = segment;
    }
    buffer.exhausted = null;
  }

  /** The one clock reading in flight for this buffer: extends the segments' proofs, or ends them. */
  private readClock(buffer: NumberBuffer): Promise<void> {
    if (buffer.reading === null) {
      buffer.reading = this.confirm(buffer).finally(() => {
        buffer.reading = null;
      });
    }
    return buffer.reading;
  }

  private async confirm(buffer: NumberBuffer): Promise<void> {
    const clock = this.options.clock;
    const anchor = clock.now();
    let reading;
    try {
      reading = await this.store.readClock(buffer.key);
    } catch (err) {
      this.emit({ kind: 'clock_read', outcome: 'failed' });
      throw err;
    }
    const reply = clock.now();
    if (reading.format === null) {
      this.emit({ kind: 'clock_read', outcome: 'not_found' });
      this.forget(buffer);
      throw notFound(buffer.key);
    }
    const anchored: ClockAnchor = { anchor, reply, dbMs: parseDbTime(reading.dbNow) };
    let over = false;
    for (const segment of [buffer.current, buffer.next]) {
      if (segment !== null && !segment.proof.confirm(anchored)) {
        segment.drop();
        over = true;
      }
    }
    this.emit({ kind: 'clock_read', outcome: over ? 'period_over' : 'confirmed' });
  }

  private forget(buffer: NumberBuffer): void {
    buffer.current?.drop();
    buffer.next?.drop();
    if (this.buffers.get(buffer.key) !== buffer) {
      // Forgotten before (a delete, a "not found") with its miss: a late reply must not undo a create.
      return;
    }
    this.buffers.delete(buffer.key);
    if (this.misses.size >= MAX_MISSES) {
      this.misses.clear();
    }
    this.misses.set(buffer.key, this.options.clock.now());
  }

  private patternOf(source: string): NumberPattern {
    let pattern = this.patterns.get(source);
    if (!pattern) {
      pattern = parsePattern(source);
      this.patterns.set(source, pattern);
    }
    return pattern;
  }
}
