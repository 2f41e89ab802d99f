/**
 * In-process snowflake throughput: one generator on the real clock, no HTTP.
 * Run: npx ts-node scripts/bench/snowflake-inprocess.ts [totalIds=5000000] [batch=1000]
 */
import { systemClock } from '../../src/snowflake/core/clock';
import { SnowflakeGenerator } from '../../src/snowflake/core/snowflake-generator';

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 5_000_000);
  const batch = Number(process.argv[3] ?? 1000);
  if (!Number.isSafeInteger(total) || total < 1 || !Number.isSafeInteger(batch) || batch < 1) {
    throw new Error('usage: snowflake-inprocess.ts [totalIds] [batch]');
  }
  const gen = new SnowflakeGenerator(
    { twepoch: 1288834974657, workerId: 1, clockToleranceMs: 5, randomStartBound: 100 },
    systemClock,
  );
  let previous = -1n;
  let issued = 0;
  const started = process.hrtime.bigint();
  while (issued < total) {
    const ids = await gen.nextBatch(Math.min(batch, total - issued));
    for (const id of ids) {
      if (id <= previous) {
        throw new Error(`not increasing: ${id} after ${previous}`);
      }
      previous = id;
    }
    issued += ids.length;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`snowflake in-process: ${issued} ids in ${seconds.toFixed(2)} s = ${Math.round(issued / seconds)} ids/s (batch ${batch}, ceiling 4,096,000 ids/s per worker id)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
