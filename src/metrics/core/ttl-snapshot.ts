export interface TtlSnapshotOptions {
  /**
   * How long past the TTL `get()` still answers with the held result at once, while one
   * computation runs in the background to replace it (0: never; a read after the TTL waits).
   */
  staleMs?: number;
  /** The clock (ms). */
  now?: () => number;
}

type Held<T> = { at: number; result: { ok: true; value: T } | { ok: false; error: Error } };

/**
 * A value computed at most once per `ttlMs`, whatever the number of readers: readers within the
 * TTL of the last computation's end get its result (a failure too, so a failing backend is not
 * retried per read); a read after that starts one computation, which every concurrent reader
 * shares (no thundering herd). With `staleMs`, `get()` after the TTL and within `staleMs` more
 * answers with the held result at once and starts that computation in the background, so a
 * reader never waits for it then; `fresh()` always waits. `ttlMs` 0: each read computes, except
 * that reads while a computation is running share it (and nothing is served stale).
 * Framework-free; time comes from `now`.
 */
export class TtlSnapshot<T> {
  private inFlight: Promise<T> | null = null;
  private last: Held<T> | null = null;
  private readonly staleMs: number;
  private readonly now: () => number;

  constructor(
    private readonly compute: () => Promise<T>,
    private readonly ttlMs: number,
    options: TtlSnapshotOptions = {},
  ) {
    this.staleMs = options.staleMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  /** The held result within the TTL; past it, within `staleMs`, too (a new computation starts); else a computation's. */
  get(): Promise<T> {
    const last = this.last;
    if (last && this.ttlMs > 0) {
      const age = this.now() - last.at;
      if (age < this.ttlMs) {
        return settled(last);
      }
      if (age < this.ttlMs + this.staleMs) {
        // Its failure is the next reader's (held like a value); here nobody awaits it.
        this.refresh().catch(() => undefined);
        return settled(last);
      }
    }
    return this.refresh();
  }

  /** The held result within the TTL, else a computation's (waits for it). */
  fresh(): Promise<T> {
    const last = this.last;
    if (last && this.ttlMs > 0 && this.now() - last.at < this.ttlMs) {
      return settled(last);
    }
    return this.refresh();
  }

  /** The running computation, or a new one. */
  private refresh(): Promise<T> {
    if (this.inFlight) {
      return this.inFlight;
    }
    // compute() starts in a microtask, so `inFlight` is set before anything can settle.
    const running = Promise.resolve()
      .then(() => this.compute())
      .then(
        (value) => {
          this.last = { at: this.now(), result: { ok: true, value } };
          return value;
        },
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          this.last = { at: this.now(), result: { ok: false, error } };
          throw error;
        },
      )
      .finally(() => {
        this.inFlight = null;
      });
    this.inFlight = running;
    return running;
  }
}

function settled<T>(held: Held<T>): Promise<T> {
  return held.result.ok ? Promise.resolve(held.result.value) : Promise.reject(held.result.error);
}
