import { SnowflakeClockWaits } from '../../../src/snowflake/clock-waits';
import { SnowflakeGenerator } from '../../../src/snowflake/core/snowflake-generator';
import { FakeClock } from './fake-clock';

const T = 1_763_769_600_000;

describe('SnowflakeClockWaits (metrics of clock-rollback waits)', () => {
  it('counts the rollback waits of a generator on the observed clock, and nothing else', async () => {
    const clock = new FakeClock(T);
    const waits = new SnowflakeClockWaits();
    const observed = waits.observe(clock);
    const gen = new SnowflakeGenerator(
      { twepoch: 1288834974657, workerId: 1, clockToleranceMs: 5, randomStartBound: 1 },
      observed,
    );
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    await gen.next();
    clock.time = T + 1;
    await gen.next();
    expect(waits.count).toBe(0);
    clock.time = T - 2;
    await gen.next();
    expect(waits.count).toBe(1);
    expect(waits.totalMs).toBe(clock.sleeps[0]);
    expect(observed.now()).toBe(clock.time);
  });
});
