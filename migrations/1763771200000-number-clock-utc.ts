import { MigrationInterface, QueryRunner } from 'typeorm';

/** The view as migration 1763770900000 defined it, as MariaDB and MySQL show it (lower case, no quotes or spaces). */
const SESSION_CLOCK = ['selectcurrent_timestamp(3)asdb_now', 'selectnow(3)asdb_now'];
const UTC_CLOCK = ['selectutc_timestamp(3)asdb_now'];

/**
 * The database clock of number formats (`shardleaf_db_clock`) becomes `UTC_TIMESTAMP(3)`: the same
 * in every session, whatever its `time_zone` (NOW() follows each pooled connection's session time
 * zone, so after a `SET GLOBAL time_zone` old and new connections would disagree about the day).
 * The time zone whose days the resets follow is NUMBER_TIME_ZONE (docs/numbers.md), applied by
 * the service. A view an operator redefined (another zone, say) is left as it is.
 */
export class NumberClockUtc1763771200000 implements MigrationInterface {
  name = 'NumberClockUtc1763771200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (await isDefinedAs(queryRunner, SESSION_CLOCK)) {
      await queryRunner.query('CREATE OR REPLACE SQL SECURITY INVOKER VIEW `shardleaf_db_clock` AS SELECT UTC_TIMESTAMP(3) AS `db_now`');
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await isDefinedAs(queryRunner, UTC_CLOCK)) {
      await queryRunner.query('CREATE OR REPLACE SQL SECURITY INVOKER VIEW `shardleaf_db_clock` AS SELECT NOW(3) AS `db_now`');
    }
  }
}

async function isDefinedAs(queryRunner: QueryRunner, definitions: string[]): Promise<boolean> {
  const rows = (await queryRunner.query(
    "SELECT VIEW_DEFINITION AS d FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'shardleaf_db_clock'",
  )) as Array<{ d: string | null }>;
  const definition = String(rows[0]?.d ?? '')
    .toLowerCase()
    .replace(/[`\s]/g, '');
  return definitions.includes(definition);
}
