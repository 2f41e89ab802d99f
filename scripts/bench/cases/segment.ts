import { BenchEnv, admin } from '../lib/bench-env';
import { httpRows, measure } from '../lib/compare';
import { BenchOptions } from '../lib/options';
import { startCeiling, startService } from '../lib/service';
import { Row } from '../lib/table';

/** Segment get, and snowflake get over HTTP, vs a Nest + Fastify constant-response server. */
export async function segmentCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('segment get (and snowflake get) vs Nest + fastify constant response');
  const service = await startService(env, opts.profileDir);
  const constant = await startCeiling('nest-constant.ts', env, opts.profileDir);
  try {
    await admin(env, service.port, 'POST', '/admin/segment/tags', { tag: 'bench', step: 100_000 });
    // The ceiling between its two subjects: every subject run is next to a ceiling run.
    const [seg, ceiling, snow] = await measure(
      opts,
      [
        { server: service, paths: ['/api/segment/get/bench'] },
        { server: constant, paths: ['/api/segment/get/bench'] },
        { server: { ...service, name: 'shardleaf snowflake' }, paths: ['/api/snowflake/get/bench'] },
      ],
      log,
    );
    const vsConstant = { result: ceiling, name: 'Nest + fastify constant' };
    return [
      ...httpRows(
        {
          case: 'segment get',
          subject: 'shardleaf GET /api/segment/get/bench',
          ceiling: vsConstant,
          target: { min: 0.95, text: '≥ 0.95 (req/s and CPU)' },
        },
        seg,
      ),
      ...httpRows(
        {
          case: 'snowflake get (HTTP)',
          subject: 'shardleaf GET /api/snowflake/get/bench',
          ceiling: vsConstant,
          target: { min: 0.95, text: '≥ 0.95 (req/s and CPU)' },
        },
        snow,
      ),
      ...httpRows({ case: 'segment get', subject: 'ceiling: Nest + fastify constant response' }, ceiling),
    ];
  } finally {
    await service.stop();
    await constant.stop();
  }
}
