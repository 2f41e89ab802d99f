/**
 * A fixed-interval task that never overlaps itself; `stop` aborts the signal the task was given
 * (its waits end at once, it does nothing more after its current step) and resolves once a run
 * in flight is done, so nothing is left running after app shutdown.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly stopping = new AbortController();

  constructor(
    private readonly intervalMs: number,
    private readonly task: (signal: AbortSignal) => Promise<void>,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    this.stopping.abort();
    await this.running;
  }

  private tick(): void {
    if (this.running || this.stopping.signal.aborted) {
      return;
    }
    this.running = this.task(this.stopping.signal).finally(() => {
      this.running = null;
    });
  }
}
