import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `leaf_workerid_alloc` of the Leaf fork's mysql mode: one row per `ip:port`, whose row id is the
 * instance's snowflake worker id, and the largest time it reported. `IF NOT EXISTS`: a table
 * created by the fork's own SQL is adopted unchanged.
 */
export class CreateLeafWorkeridAlloc1763769800000 implements MigrationInterface {
  name = 'CreateLeafWorkeridAlloc1763769800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`leaf_workerid_alloc\` (
        \`id\` int(10) unsigned NOT NULL AUTO_INCREMENT COMMENT 'worker id',
        \`ip_port\` varchar(128) NOT NULL DEFAULT '' COMMENT 'ip:port',
        \`ip\` varchar(128) NOT NULL DEFAULT '' COMMENT 'ip',
        \`port\` varchar(64) NOT NULL DEFAULT '' COMMENT 'port',
        \`max_timestamp\` bigint(20) DEFAULT NULL COMMENT '最后一次上报的时间戳',
        \`create_time\` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '创建时间',
        \`update_time\` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP COMMENT '更新时间',
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uk_ip_port\` (\`ip_port\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='snowflake worker id per ip:port'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `leaf_workerid_alloc`');
  }
}
