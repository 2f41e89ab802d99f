import { BenchEnv, databaseUrl } from '../lib/bench-env';
import { BenchOptions } from '../lib/options';
import { ROOT, TS_NODE, runNode } from '../lib/proc';
import { Row } from '../lib/table';
import type { RefillCost } from '../workers/refill-cost';

/** DB round trips and ms per refill at step 1000 and 100,000; Redis bytes per queued ID. */
export async function refillCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('refill cost');
  const spec = {
    databaseUrl: databaseUrl(env),
    redisUrl: env.redisUrl,
    keyPrefix: env.keyPrefix,
    steps: [1000, 100_000],
    refills: opts.quick ? 5 : 15,
  };
  const out = await runNode([...TS_NODE, `${ROOT}/scripts/bench/workers/refill-cost.ts`, JSON.stringify(spec)]);
  const costs = JSON.parse(out.trim().split('\n').pop() ?? '[]') as RefillCost[];
  return costs.map(
    (c): Row => ({
      case: `refill step ${c.step.toLocaleString('en-US')}`,
      subject: 'QueueRefillService.refillShard',
      idsPerSec: (c.step / c.msPerRefill) * 1000,
      p50Ms: c.msPerRefill,
      target: '≤ 1 DB round trip',
      met: c.dbRoundTripsPerRefill <= 1,
      note:
        `${c.dbRoundTripsPerRefill} DB round trips, allocate ${c.msPerAllocate.toFixed(2)} ms, ` +
        `${c.redisCommandsPerRefill} Redis commands, ${c.redisBytesPerId.toFixed(2)} Redis bytes/ID (median of ${c.refills})`,
    }),
  );
}
