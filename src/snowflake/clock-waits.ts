import { Clock } from './core/clock';

/**
 * Counts the clock-rollback waits of the snowflake generator (its only use of `Clock.sleep`) for
 * the metrics. `observe` wraps the clock the generator is given.
 */
export class SnowflakeClockWaits {
  count = 0;
  totalMs = 0;

  observe(clock: Clock): Clock {
    return {
      now: () => clock.now(),
      sleep: (ms, signal) => {
        this.count++;
        this.totalMs += ms;
        return clock.sleep(ms, signal);
      },
    };
  }
}
