import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The allocation history of segment IDs (docs/id-history.md): one row per range a `leaf_alloc` tag
 * handed out — segment fetches and leases alike — with the database's UTC time, written in the
 * fetch's or lease's own transaction (LeafAllocRepository, LeafAllocLeaseRepository). Not part of
 * Leaf's schema; Leaf's own DDL for `leaf_alloc` is unaffected.
 */
export class CreateLeafAllocHistory1763771100000 implements MigrationInterface {
  name = 'CreateLeafAllocHistory1763771100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`leaf_alloc_history\` (
        \`biz_tag\` varchar(128) NOT NULL,
        \`from_id\` bigint(20) NOT NULL COMMENT 'first ID of the range',
        \`to_id\` bigint(20) NOT NULL COMMENT 'last ID of the range',
        \`allocated_at\` datetime(3) NOT NULL COMMENT 'UTC time of the allocation',
        PRIMARY KEY (\`biz_tag\`, \`to_id\`),
        KEY \`idx_leaf_alloc_history_time\` (\`biz_tag\`, \`allocated_at\`),
        KEY \`idx_leaf_alloc_history_retention\` (\`allocated_at\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: when each segment ID range was allocated'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `leaf_alloc_history`');
  }
}
