import { RingBuffer } from './ring-buffer';

/** Running totals of this instance's counters at one moment (read from the metrics registry). */
export interface CounterTotals {
  /** IDs issued so far, by generator. */
  ids: Record<string, number>;
  /** Finished refills so far, and those that failed. */
  refills: number;
  refillFailures: number;
  /** Error replies so far: 5xx and 4xx. */
  serverErrors: number;
  clientErrors: number;
}

/** One point of the dashboard's charts: rates over the interval that ended at `at`. */
export interface HistoryPoint {
  at: number;
  idsPerSecond: Record<string, number>;
  refillsPerMinute: number;
  refillFailuresPerMinute: number;
  serverErrorsPerMinute: number;
  clientErrorsPerMinute: number;
  /** Queued IDs per app (all shards, as Redis holds them), or null when the read failed. */
  queueDepth: Record<string, number> | null;
}

/** The default span of the dashboard's charts. */
export const HISTORY_SPAN_MS = 15 * 60_000;

/**
 * The last `spanMs` of activity, one point per sample, in a bounded ring buffer (no store).
 * Samples are counter totals taken on a timer, so recording costs nothing per request; a point
 * is the difference to the previous sample divided by the time between them. A counter that went
 * down (a registry reset) counts from 0. Framework-free: times are passed in.
 */
export class ActivityHistory {
  private readonly ring: RingBuffer<HistoryPoint>;
  private previous: { at: number; totals: CounterTotals } | null = null;

  constructor(intervalMs: number, spanMs = HISTORY_SPAN_MS) {
    if (!(intervalMs > 0)) {
      throw new RangeError('intervalMs must be > 0');
    }
    this.ring = new RingBuffer(Math.ceil(spanMs / intervalMs) + 1);
  }

  /** Records a sample; the first one only sets the baseline (no point). */
  record(at: number, totals: CounterTotals, queueDepth: Record<string, number> | null): void {
    const prev = this.previous;
    if (prev && at <= prev.at) {
      return;
    }
    this.previous = { at, totals: { ...totals, ids: { ...totals.ids } } };
    if (!prev) {
      return;
    }
    const seconds = (at - prev.at) / 1000;
    const delta = (now: number, before: number | undefined) => (now >= (before ?? 0) ? now - (before ?? 0) : now);
    const idsPerSecond: Record<string, number> = {};
    for (const [generator, total] of Object.entries(totals.ids)) {
      idsPerSecond[generator] = delta(total, prev.totals.ids[generator]) / seconds;
    }
    const perMinute = (now: number, before: number) => (delta(now, before) * 60) / seconds;
    this.ring.push({
      at,
      idsPerSecond,
      refillsPerMinute: perMinute(totals.refills, prev.totals.refills),
      refillFailuresPerMinute: perMinute(totals.refillFailures, prev.totals.refillFailures),
      serverErrorsPerMinute: perMinute(totals.serverErrors, prev.totals.serverErrors),
      clientErrorsPerMinute: perMinute(totals.clientErrors, prev.totals.clientErrors),
      queueDepth,
    });
  }

  /** Oldest first. */
  points(): HistoryPoint[] {
    return this.ring.toArray();
  }

  get capacity(): number {
    return this.ring.capacity;
  }
}
