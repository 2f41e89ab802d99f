import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * mysql mode: who holds a `leaf_workerid_alloc` row. `owner` is a random token of the live
 * instance (NULL after a graceful stop), `last_report` the DATABASE's time (NOW(3)) of its last
 * report; a second instance with the same ip:port finds the row owned and recently reported, and is
 * refused. Both columns are nullable: rows of the fork's table stay valid.
 */
export class AddLeafWorkeridAllocOwner1763770800000 implements MigrationInterface {
  name = 'AddLeafWorkeridAllocOwner1763770800000';

  // hasColumn instead of ADD COLUMN IF NOT EXISTS, which MySQL (unlike MariaDB) lacks.
  async up(queryRunner: QueryRunner): Promise<void> {
    if (!(await queryRunner.hasColumn('leaf_workerid_alloc', 'owner'))) {
      await queryRunner.query(
        "ALTER TABLE `leaf_workerid_alloc` ADD COLUMN `owner` varchar(64) DEFAULT NULL COMMENT 'token of the live holder'",
      );
    }
    if (!(await queryRunner.hasColumn('leaf_workerid_alloc', 'last_report'))) {
      await queryRunner.query(
        "ALTER TABLE `leaf_workerid_alloc` ADD COLUMN `last_report` datetime(3) DEFAULT NULL COMMENT 'database time of the last report'",
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ['owner', 'last_report']) {
      if (await queryRunner.hasColumn('leaf_workerid_alloc', column)) {
        await queryRunner.query(`ALTER TABLE \`leaf_workerid_alloc\` DROP COLUMN \`${column}\``);
      }
    }
  }
}
