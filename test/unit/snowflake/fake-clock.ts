import { Clock } from '../../../src/snowflake/core/clock';

/** A clock the test moves. `autoAdvance` is added after every read (lets spin loops finish). */
export class FakeClock implements Clock {
  autoAdvance = 0;
  /** Whether `sleep` moves the time forward by the slept ms. */
  advanceOnSleep = true;
  readonly sleeps: number[] = [];

  constructor(public time: number) {}

  now(): number {
    const t = this.time;
    this.time += this.autoAdvance;
    return t;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    if (this.advanceOnSleep) {
      this.time += ms;
    }
  }
}
