import { BenchEnv, admin } from '../lib/bench-env';
import { failures, measure } from '../lib/compare';
import { BenchOptions } from '../lib/options';
import { startCeiling, startService } from '../lib/service';
import { Row, cpuRatio } from '../lib/table';

/** Segment get, and snowflake get over HTTP, vs a Nest + Fastify constant-response server. */
export async function segmentCase(opts: BenchOptions, env: BenchEnv, log: (s: string) => void): Promise<Row[]> {
  log('segment get (and snowflake get) vs Nest + fastify constant response');
  const service = await startService(env, opts.profileDir);
  const constant = await startCeiling('nest-constant.ts', env, opts.profileDir);
  try {
    await admin(env, service.port, 'POST', '/admin/segment/tags', { tag: 'bench', step: 100_000 });
    const [seg, snow, ceiling] = await measure(
      opts,
      [
        { server: service, paths: ['/api/segment/get/bench'] },
        { server: { ...service, name: 'shardleaf snowflake' }, paths: ['/api/snowflake/get/bench'] },
        { server: constant, paths: ['/api/segment/get/bench'] },
      ],
      log,
    );
    const segRatio = seg.reqPerSec / ceiling.reqPerSec;
    const snowRatio = snow.reqPerSec / ceiling.reqPerSec;
    return [
      {
        case: 'segment get',
        subject: 'shardleaf GET /api/segment/get/bench',
        reqPerSec: seg.reqPerSec,
        idsPerSec: seg.reqPerSec,
        p50Ms: seg.p50,
        p99Ms: seg.p99,
        cpuUsPerReq: seg.cpuUsPerReq,
        ratio: segRatio,
        cpuRatio: cpuRatio(seg, ceiling),
        ceiling: 'Nest + fastify constant',
        target: '≥ 0.95',
        met: segRatio >= 0.95,
        note: failures(seg),
      },
      {
        case: 'snowflake get (HTTP)',
        subject: 'shardleaf GET /api/snowflake/get/bench',
        reqPerSec: snow.reqPerSec,
        idsPerSec: snow.reqPerSec,
        p50Ms: snow.p50,
        p99Ms: snow.p99,
        cpuUsPerReq: snow.cpuUsPerReq,
        ratio: snowRatio,
        cpuRatio: cpuRatio(snow, ceiling),
        ceiling: 'Nest + fastify constant',
        note: ['no target; for comparison', failures(snow)].filter((s) => s).join('; '),
      },
      {
        case: 'segment get',
        subject: 'ceiling: Nest + fastify constant response',
        reqPerSec: ceiling.reqPerSec,
        idsPerSec: ceiling.reqPerSec,
        p50Ms: ceiling.p50,
        p99Ms: ceiling.p99,
        cpuUsPerReq: ceiling.cpuUsPerReq,
        note: failures(ceiling),
      },
    ];
  } finally {
    await service.stop();
    await constant.stop();
  }
}
