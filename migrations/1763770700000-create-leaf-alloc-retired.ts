import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `leaf_alloc_retired`: the highest `max_id` of every segment tag deleted through the admin API.
 * A tag re-created later resumes above it, so no ID it ever issued is issued again. Rows are
 * never removed by the service. Not part of Leaf's schema; Leaf's own DDL for `leaf_alloc` is
 * unaffected.
 */
export class CreateLeafAllocRetired1763770700000 implements MigrationInterface {
  name = 'CreateLeafAllocRetired1763770700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`leaf_alloc_retired\` (
        \`biz_tag\` varchar(128) NOT NULL,
        \`max_id\` bigint(20) NOT NULL,
        \`deleted_at\` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (\`biz_tag\`)
      ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `leaf_alloc_retired`');
  }
}
