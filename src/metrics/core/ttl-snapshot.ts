/**
 * A value computed at most once per `ttlMs`, whatever the number of readers: readers within the
 * TTL of the last computation's end get its result (a failure too, so a failing backend is not
 * retried per read); a read after that starts one computation, which every concurrent reader
 * shares (no thundering herd). `ttlMs` 0: each read computes, except that reads while a
 * computation is running share it. Framework-free; time comes from `now`.
 */
export class TtlSnapshot<T> {
  private inFlight: Promise<T> | null = null;
  private last: { at: number; result: { ok: true; value: T } | { ok: false; error: Error } } | null = null;

  constructor(
    private readonly compute: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    if (this.inFlight) {
      return this.inFlight;
    }
    const last = this.last;
    if (last && this.ttlMs > 0 && this.now() - last.at < this.ttlMs) {
      return last.result.ok ? Promise.resolve(last.result.value) : Promise.reject(last.result.error);
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
