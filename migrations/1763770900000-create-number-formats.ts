import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Formatted business numbers (docs/numbers.md):
 * - `number_format`: one row per format key: its pattern, reset period, step and description.
 *   Allocations of a key lock this row first, so they are ordered across instances.
 * - `number_seq`: the highest sequence allocated per (key, period); `period` is '' (reset none),
 *   `yyyy`, `yyyyMM` or `yyyyMMdd`. Rows are never deleted, also not with their format: a format
 *   deleted and created again continues above every sequence it allocated.
 * - `number_format_retired`: the pattern and reset of each deleted key; a re-create must use the
 *   same ones (another pattern could print numbers that were issued before).
 * - `shardleaf_db_clock`: the database clock the periods are decided by, `NOW(3)` in the session
 *   time zone. An operator may redefine it (say, to count days in another time zone:
 *   `CONVERT_TZ(UTC_TIMESTAMP(3), '+00:00', '+08:00')`); a view needs no privilege beyond
 *   CREATE VIEW, also with binary logging on (a stored function would).
 * Keys, patterns and periods are ASCII with a binary collation: `ORD` and `ord` are two keys.
 */
export class CreateNumberFormats1763770900000 implements MigrationInterface {
  name = 'CreateNumberFormats1763770900000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`number_format\` (
        \`fmt_key\` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`pattern\` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`reset_period\` varchar(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'none, daily, monthly or yearly',
        \`step\` int(11) NOT NULL COMMENT 'sequences one allocation takes',
        \`description\` varchar(256) DEFAULT NULL,
        \`create_time\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,
        \`update_time\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
        PRIMARY KEY (\`fmt_key\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: formatted number definitions'`);
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`number_seq\` (
        \`fmt_key\` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`period\` varchar(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'empty, yyyy, yyyyMM or yyyyMMdd',
        \`max_seq\` bigint(20) NOT NULL COMMENT 'highest sequence allocated in the period',
        \`update_time\` datetime(3) NOT NULL COMMENT 'UTC time of the last allocation',
        PRIMARY KEY (\`fmt_key\`, \`period\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: formatted number sequences per period'`);
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`number_format_retired\` (
        \`fmt_key\` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`pattern\` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`reset_period\` varchar(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        \`deleted_at\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (\`fmt_key\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: tombstones of deleted number formats'`);
    await queryRunner.query('CREATE OR REPLACE SQL SECURITY INVOKER VIEW `shardleaf_db_clock` AS SELECT NOW(3) AS `db_now`');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP VIEW IF EXISTS `shardleaf_db_clock`');
    for (const table of ['number_format_retired', 'number_seq', 'number_format']) {
      await queryRunner.query(`DROP TABLE IF EXISTS \`${table}\``);
    }
  }
}
