import { systemClock } from '../../../src/snowflake/core/clock';
import { SnowflakeGenerator } from '../../../src/snowflake/core/snowflake-generator';

describe('SnowflakeGenerator volume', () => {
  it('issues 4,096,000+ strictly increasing (so distinct) IDs on the real clock', async () => {
    const gen = new SnowflakeGenerator(
      { twepoch: 1288834974657, workerId: 3, clockToleranceMs: 5, randomStartBound: 100 },
      systemClock,
    );
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    const total = 4_100_000;
    let previous = -1n;
    let issued = 0;
    let violations = 0;
    while (issued < total) {
      const batch = await gen.nextBatch(1000);
      for (const id of batch) {
        if (id <= previous) {
          violations++;
        }
        previous = id;
      }
      issued += batch.length;
    }
    expect(issued).toBe(total);
    expect(violations).toBe(0);
  }, 120_000);
});
