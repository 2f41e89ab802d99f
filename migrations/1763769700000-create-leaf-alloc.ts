import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `leaf_alloc` exactly as Meituan Leaf's `leaf_alloc.sql`. `IF NOT EXISTS`: a database where
 * Leaf's own DDL already ran is adopted unchanged (and its rows served as they are).
 */
export class CreateLeafAlloc1763769700000 implements MigrationInterface {
  name = 'CreateLeafAlloc1763769700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`leaf_alloc\` (
        \`biz_tag\` varchar(128) NOT NULL DEFAULT '',
        \`max_id\` bigint(20) NOT NULL DEFAULT '1',
        \`step\` int(11) NOT NULL,
        \`description\` varchar(256) DEFAULT NULL,
        \`update_time\` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
        PRIMARY KEY (\`biz_tag\`)
      ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `leaf_alloc`');
  }
}
