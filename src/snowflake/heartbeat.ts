/**
 * A fixed-interval task that never overlaps itself; `stop` resolves once a run in flight is done,
 * so nothing is left running after app shutdown.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    await this.running;
  }

  private tick(): void {
    if (this.running) {
      return;
    }
    this.running = this.task().finally(() => {
      this.running = null;
    });
  }
}
