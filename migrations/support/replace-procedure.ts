import { QueryRunner } from 'typeorm';

/**
 * Defines stored procedure `name` (`definition` is everything after `CREATE PROCEDURE name`),
 * replacing any earlier one. On MariaDB in one statement (`CREATE OR REPLACE PROCEDURE`): a service
 * instance calling it meanwhile never finds it missing. MySQL has no such statement: there it is
 * DROP then CREATE, and a call in between finds it missing (the repositories fall back to their
 * statement-by-statement transaction for that call and try the procedure again later).
 */
export async function replaceProcedure(queryRunner: QueryRunner, name: string, definition: string): Promise<void> {
  const rows = (await queryRunner.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
  if (/mariadb/i.test(String(rows[0]?.v))) {
    await queryRunner.query(`CREATE OR REPLACE PROCEDURE \`${name}\`${definition}`);
    return;
  }
  await queryRunner.query(`DROP PROCEDURE IF EXISTS \`${name}\``);
  await queryRunner.query(`CREATE PROCEDURE \`${name}\`${definition}`);
}
