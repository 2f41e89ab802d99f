import { median } from '../lib/load';
import { BenchOptions } from '../lib/options';
import { ROOT, TS_NODE, runNode } from '../lib/proc';
import { Row } from '../lib/table';

/** 12 sequence bits: at most 4096 IDs per millisecond per worker id. */
export const SEQUENCE_LIMIT = 4_096_000;
const GENERATORS = ['shardleaf-batch', 'shardleaf-next', 'nodejs-snowflake', '@sapphire/snowflake'] as const;

interface PeerRun {
  name: string;
  ids: number;
  seconds: number;
  idsPerSec: number;
  duplicates: number;
  nonIncreasing: number;
}

const LABELS: Record<(typeof GENERATORS)[number], string> = {
  'shardleaf-batch': 'shardleaf SnowflakeGenerator.nextBatch(1000)',
  'shardleaf-next': 'shardleaf SnowflakeGenerator.next() (one await per ID)',
  'nodejs-snowflake': 'nodejs-snowflake getUniqueID()',
  '@sapphire/snowflake': '@sapphire/snowflake generate()',
};

/** Each generator in a process of its own, `runs` times, generators interleaved. */
export async function snowflakeCase(opts: BenchOptions, log: (s: string) => void): Promise<Row[]> {
  log(`snowflake in-process, ${opts.snowflakeIds.toLocaleString('en-US')} ids per run`);
  const runs = new Map<string, PeerRun[]>(GENERATORS.map((g) => [g, []]));
  for (let i = 0; i < opts.runs; i++) {
    for (const g of GENERATORS) {
      const out = await runNode([...TS_NODE, `${ROOT}/scripts/bench/workers/snowflake-peers.ts`, g, String(opts.snowflakeIds)]);
      const r = JSON.parse(out.trim().split('\n').pop() ?? '') as PeerRun;
      log(`  ${g} run ${i + 1}: ${Math.round(r.idsPerSec)} ids/s, ${r.duplicates} duplicates`);
      runs.get(g)?.push(r);
    }
  }
  return GENERATORS.map((g): Row => {
    const rs = runs.get(g) ?? [];
    const idsPerSec = median(rs.map((r) => r.idsPerSec));
    const duplicates = Math.max(...rs.map((r) => r.duplicates));
    const nonIncreasing = Math.max(...rs.map((r) => r.nonIncreasing));
    const ratio = idsPerSec / SEQUENCE_LIMIT;
    const ours = g === 'shardleaf-batch';
    return {
      case: 'snowflake in-process',
      subject: LABELS[g],
      idsPerSec,
      ratio,
      ceiling: '4,096,000/s bit limit',
      target: ours ? '≥ 0.95, 0 duplicates' : undefined,
      met: ours ? ratio >= 0.95 && duplicates === 0 : undefined,
      note: `${duplicates} duplicates (worst run)${nonIncreasing > 0 ? `, ${nonIncreasing} not increasing` : ''}`,
    };
  });
}
