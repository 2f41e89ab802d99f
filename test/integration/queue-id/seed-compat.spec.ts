import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeQueueId, decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';

/** Seed 001's DDL, verbatim. */
const SEED_DDL = `CREATE TABLE \`id_alloc\` (
  \`app_id\` int(11) NOT NULL COMMENT '业务id',
  \`app_name\` varchar(128) NOT NULL COMMENT '业务名',
  \`max_id\` bigint(20) NOT NULL DEFAULT '1' COMMENT '已用最大id',
  \`shard_id\` int(11) NOT NULL COMMENT '分片id',
  \`step\` int(11) NOT NULL DEFAULT '1000' COMMENT '号段数量',
  \`description\` varchar(255) DEFAULT NULL,
  \`create_time\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '创建时间',
  \`update_time\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP COMMENT '更新时间',
  \`max_limit_id\` bigint(20) NOT NULL DEFAULT '0' COMMENT '业务最大限制id',
  PRIMARY KEY (\`app_id\`,\`shard_id\`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='id生成'`;

describe("a database made by the seed's own DDL and alloc_initData", () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('qseed');
    await env.sql(SEED_DDL);
    // scripts/sql/alloc_initData.sql without the client-side DELIMITER lines.
    const procedure = readFileSync(join(__dirname, '../../../scripts/sql/alloc_initData.sql'), 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith('--') && !line.startsWith('DELIMITER') && !line.startsWith('DROP'))
      .join('\n')
      .replace(/END \$\s*$/, 'END');
    await env.sql(procedure);
    await env.sql("CALL alloc_initData(1, 'test', '描述')");
    app = await startApp(env.config());
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('migrates without touching the existing table', async () => {
    const migrations = (await env.sql('SELECT name FROM shardleaf_migrations')) as Array<{ name: string }>;
    expect(migrations.map((m) => m.name)).toContain('CreateIdAlloc1763769600000');
    // The tombstone table of admin deletes is added next to the seed's table (empty).
    expect(migrations.map((m) => m.name)).toContain('CreateIdAllocRetired1763770600000');
    expect(await env.sql('SELECT * FROM id_alloc_retired')).toEqual([]);
    const rows = (await env.sql('SELECT COUNT(*) AS n, MIN(max_id) AS lo, MAX(step) AS step FROM id_alloc')) as Array<{
      n: string;
      lo: string;
      step: number;
    }>;
    // alloc_initData left max_id 0; the start-up sweep took exactly one step (1..1000) per shard.
    expect(rows[0]).toMatchObject({ n: '64', lo: '1000', step: 1000 });
  });

  it('issues IDs from it, starting at index 1 of each shard', async () => {
    // alice and polygenelubricants share shard 0, so the second of them gets index 2.
    const expected: Array<[string, bigint]> = [
      ['alice', 1n],
      ['bob', 1n],
      ['polygenelubricants', 2n],
      ['张三', 1n],
    ];
    for (const [gatePass, index] of expected) {
      const res = await request(app, 'GET', `/api/id/1?gatePass=${encodeURIComponent(gatePass)}`, { token: null });
      expect(res.status).toBe(200);
      const parts = decomposeQueueId(BigInt(res.body));
      expect(parts).toEqual({ index, shardId: shardOf(gatePass), appId: 1 });
    }
    const again = await request(app, 'GET', '/api/id/1?gatePass=alice', { token: null });
    expect(again.body).toBe(composeQueueId(3n, 0, 1).toString());
  });
});
