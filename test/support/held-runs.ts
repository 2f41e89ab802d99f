/**
 * The runs of a faked background task (a scheduler's job): counted, held until `release()` while
 * `hold` is set (a run still going when the next tick comes), or failing while `fail` is set.
 */
export class HeldRuns {
  count = 0;
  hold = false;
  fail = false;
  private waiting: Array<() => void> = [];

  async run(): Promise<void> {
    this.count++;
    if (this.hold) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    if (this.fail) {
      throw new Error('mysql is down');
    }
  }

  release(): void {
    this.waiting.splice(0).forEach((resolve) => resolve());
  }
}
