import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `id_alloc` exactly as seed 001's DDL. `IF NOT EXISTS`: a database where the seed's own
 * CREATE TABLE already ran is adopted unchanged.
 */
export class CreateIdAlloc1763769600000 implements MigrationInterface {
  name = 'CreateIdAlloc1763769600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`id_alloc\` (
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
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='id生成'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `id_alloc`');
  }
}
