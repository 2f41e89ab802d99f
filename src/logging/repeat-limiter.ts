/**
 * A log line that repeats (the same text for every failing request during an outage) written once
 * per window instead of once per occurrence. Framework-free; the caller says how a line is written.
 *
 * What a reader sees for one message (one key):
 * - the first occurrence: its line at once, with the occurrence's own fields (e.g. its `reqId`);
 * - further occurrences within REPEAT_WINDOW_MS of that line: nothing, they are counted;
 * - the first occurrence after the window: its line, with its fields and `repeated: N, sinceMs: M`
 *   — N identical occurrences were not written in the M ms since the line before;
 * - when the occurrences stop (the outage ends), a count not yet written is written by a timer
 *   once two windows have passed since the last line: the message with `repeated` and `sinceMs`
 *   only (no request of its own). A key dropped for the key cap and `close()` write theirs at once.
 * So at most one line per key per window while it repeats, and every occurrence is either a line
 * or counted in one.
 */

/** How long after a key's line its repeats are only counted (ms). */
export const REPEAT_WINDOW_MS = 10_000;

/**
 * Keys remembered at most: a message that varies (a host:port, a duration) makes new keys; past
 * this the key whose line is oldest is dropped (its pending count written first).
 */
export const REPEAT_MAX_KEYS = 100;

/** Writes one line: the key (the message) and the fields to log with it. */
export type RepeatWrite = (message: string, fields: Record<string, unknown>) => void;

/** The time and a one-shot timer (tests pass a fake clock). */
export interface LimiterClock {
  now(): number;
  /** Calls `fn` once after `ms` without keeping the process alive; returns its cancel. */
  after(ms: number, fn: () => void): () => void;
}

export const realLimiterClock: LimiterClock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface RepeatLimiterOptions {
  windowMs?: number;
  maxKeys?: number;
  clock?: LimiterClock;
}

interface Entry {
  /** When this key's last line was written. */
  lineAt: number;
  /** Occurrences counted, not written, since that line. */
  suppressed: number;
}

export class RepeatLimiter {
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly clock: LimiterClock;
  /** In the order of their last line, oldest first (a key written again moves to the end). */
  private readonly entries = new Map<string, Entry>();
  private cancelTimer: (() => void) | undefined;

  constructor(
    private readonly write: RepeatWrite,
    options: RepeatLimiterOptions = {},
  ) {
    this.windowMs = options.windowMs ?? REPEAT_WINDOW_MS;
    this.maxKeys = options.maxKeys ?? REPEAT_MAX_KEYS;
    this.clock = options.clock ?? realLimiterClock;
  }

  /** One occurrence of `message`: written now (with `fields`), or counted. */
  report(message: string, fields: Record<string, unknown> = {}): void {
    const now = this.clock.now();
    const entry = this.entries.get(message);
    if (entry !== undefined && now - entry.lineAt < this.windowMs) {
      entry.suppressed++;
      this.armTimer(entry.lineAt + 2 * this.windowMs - now);
      return;
    }
    if (entry !== undefined) {
      this.entries.delete(message);
    } else if (this.entries.size >= this.maxKeys) {
      this.dropOldest(now);
    }
    this.entries.set(message, { lineAt: now, suppressed: 0 });
    this.write(message, entry !== undefined && entry.suppressed > 0 ? { ...fields, ...this.counted(entry, now) } : fields);
  }

  /** Writes every pending count, forgets every key and stops the timer (at shutdown); usable again after. */
  close(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const now = this.clock.now();
    for (const [message, entry] of this.entries) {
      if (entry.suppressed > 0) {
        this.write(message, this.counted(entry, now));
      }
    }
    this.entries.clear();
  }

  private counted(entry: Entry, now: number): Record<string, unknown> {
    return { repeated: entry.suppressed, sinceMs: now - entry.lineAt };
  }

  private dropOldest(now: number): void {
    const [message, entry] = this.entries.entries().next().value as [string, Entry];
    this.entries.delete(message);
    if (entry.suppressed > 0) {
      this.write(message, this.counted(entry, now));
    }
  }

  private armTimer(delayMs: number): void {
    if (this.cancelTimer === undefined) {
      this.cancelTimer = this.clock.after(Math.max(1, delayMs), () => this.sweep());
    }
  }

  /**
   * The timer: writes the counts still pending two windows after their key's line (the
   * occurrences stopped: an occurrence after the window would have written it), forgets the keys
   * whose window is over, and comes back for the counts not due yet.
   */
  private sweep(): void {
    this.cancelTimer = undefined;
    const now = this.clock.now();
    let nextDue = Infinity;
    for (const [message, entry] of this.entries) {
      const age = now - entry.lineAt;
      if (entry.suppressed > 0 && age >= 2 * this.windowMs) {
        this.entries.delete(message);
        this.write(message, this.counted(entry, now));
      } else if (entry.suppressed > 0) {
        nextDue = Math.min(nextDue, entry.lineAt + 2 * this.windowMs);
      } else if (age >= this.windowMs) {
        this.entries.delete(message);
      }
    }
    if (nextDue !== Infinity) {
      this.armTimer(nextDue - now);
    }
  }
}
