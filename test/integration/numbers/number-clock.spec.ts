import { createConnection } from 'mysql2/promise';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { appSuite } from '../../support/app-suite';
import { expectError, request, testMysqlOptions } from '../../support/test-env';

/**
 * The database clock of number formats: the view `shardleaf_db_clock` reads UTC in every session,
 * whatever its time zone, and NUMBER_TIME_ZONE decides whose days the resets follow.
 */
describe('formatted numbers: the database clock', () => {
  const suite = appSuite('numclock');

  async function readIn(timeZone: string): Promise<{ view: string; utc: string }> {
    const conn = await createConnection(testMysqlOptions(suite.env.database));
    try {
      await conn.query('SET time_zone = ?', [timeZone]);
      const [rows] = await conn.query(
        "SELECT DATE_FORMAT(db_now, '%Y-%m-%d %H:%i:%s') AS view, DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:%s') AS utc FROM shardleaf_db_clock",
      );
      return (rows as Array<{ view: string; utc: string }>)[0];
    } finally {
      await conn.end();
    }
  }

  const ms = (text: string): number => Date.parse(`${text.replace(' ', 'T')}Z`);

  it('the view reads the same time in sessions of different time zones: the database UTC clock', async () => {
    await suite.start({ SNOWFLAKE_MODE: 'off' });
    const east = await readIn('+08:00');
    const west = await readIn('-05:00');
    expect(Math.abs(ms(east.view) - ms(east.utc))).toBeLessThan(2000);
    expect(Math.abs(ms(west.view) - ms(west.utc))).toBeLessThan(2000);
    expect(Math.abs(ms(east.view) - ms(west.view))).toBeLessThan(5000);
  });

  it('migration 1763771200000 replaces the NOW(3) view of 1763770900000 and leaves a view an operator redefined', async () => {
    const dataSource = new DataSource({ ...typeormOptions(suite.env.config().database), entities: [] });
    await dataSource.initialize();
    const definition = async (): Promise<string> => {
      const rows = (await suite.env.sql(
        "SELECT VIEW_DEFINITION AS d FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'shardleaf_db_clock'",
      )) as Array<{ d: string }>;
      return rows[0].d.toLowerCase();
    };
    const again = async (view: string): Promise<void> => {
      await suite.env.sql(`CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT ${view} AS db_now`);
      await suite.env.sql("DELETE FROM shardleaf_migrations WHERE name = 'NumberClockUtc1763771200000'");
      await dataSource.runMigrations();
    };
    try {
      await again('NOW(3)');
      expect(await definition()).toContain('utc_timestamp(3)');
      await again("CONVERT_TZ(UTC_TIMESTAMP(3), '+00:00', '+08:00')");
      expect(await definition()).toContain('+08:00');
    } finally {
      await dataSource.destroy();
    }
  });

  it('NUMBER_TIME_ZONE=+08:00: the day is counted in UTC+8 (20:00 UTC is the next day)', async () => {
    await suite.env.sql("CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT TIMESTAMP'2026-11-26 20:00:00.000' AS db_now");
    const east = await suite.start({ SNOWFLAKE_MODE: 'off', NUMBER_TIME_ZONE: '+08:00' });
    const utc = await suite.start({ SNOWFLAKE_MODE: 'off' });
    const create = (app: typeof east, key: string) =>
      request(app, 'POST', '/admin/numbers', { body: { key, pattern: `${key.toUpperCase()}{yyyyMMddHH}{seq:4}`, reset: 'daily' } });
    expect((await create(east, 'east')).status).toBe(201);
    expect((await create(utc, 'utc')).status).toBe(201);
    expect((await request(east, 'GET', '/api/number/east', { token: null })).body).toBe('EAST20261127040001');
    expect((await request(utc, 'GET', '/api/number/utc', { token: null })).body).toBe('UTC20261126200001');
  });

  it('a clock view that answers NULL, or a reset_period edited by hand: 503 naming the cause (not 500); fixed, numbers again', async () => {
    const app = await suite.start({ SNOWFLAKE_MODE: 'off' });
    await suite.env.sql('CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT UTC_TIMESTAMP(3) AS db_now');
    expect((await request(app, 'POST', '/admin/numbers', { body: { key: 'nul', pattern: 'N{yyyyMMdd}{seq:4}', reset: 'daily' } })).status).toBe(201);
    await suite.env.sql(
      "CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT CONVERT_TZ(UTC_TIMESTAMP(3), '+00:00', 'Nowhere/Atlantis') AS db_now",
    );
    const nullClock = expectError(await request(app, 'GET', '/api/number/nul', { token: null }), 503, -109);
    expect(nullClock.message).toMatch(/shardleaf_db_clock answered NULL/);
    await suite.env.sql('CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT UTC_TIMESTAMP(3) AS db_now');
    expect((await request(app, 'GET', '/api/number/nul', { token: null })).body).toMatch(/^N\d{8}0001$/);

    expect((await request(app, 'POST', '/admin/numbers', { body: { key: 'rst', pattern: 'R{yyyyMMdd}{seq:4}', reset: 'daily' } })).status).toBe(201);
    await suite.env.sql("UPDATE number_format SET reset_period = 'weekly' WHERE fmt_key = 'rst'");
    const badReset = expectError(await request(app, 'GET', '/api/number/rst', { token: null }), 503, -109);
    expect(badReset.message).toMatch(/number_format 'rst' has reset_period 'weekly'/);
    expect(expectError(await request(app, 'GET', '/admin/numbers'), 503, -109).message).toMatch(/reset_period 'weekly'/);
    await suite.env.sql("UPDATE number_format SET reset_period = 'daily' WHERE fmt_key = 'rst'");
    expect((await request(app, 'GET', '/api/number/rst', { token: null })).body).toMatch(/^R\d{8}0001$/);
  });

  it('the start checks the clock view once: a line naming it when it answers NULL, none when all is well', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await suite.env.sql(
        "CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT CONVERT_TZ(UTC_TIMESTAMP(3), '+00:00', 'Nowhere/Atlantis') AS db_now",
      );
      await suite.start({ SNOWFLAKE_MODE: 'off' });
      const lines = warn.mock.calls.map((c) => String(c[0]));
      expect(lines.filter((l) => l.includes('shardleaf_db_clock'))).toEqual([expect.stringMatching(/answered NULL.*503/)]);
      warn.mockClear();
      await suite.env.sql('CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT UTC_TIMESTAMP(3) AS db_now');
      await suite.start({ SNOWFLAKE_MODE: 'off' });
      expect(warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('shardleaf_db_clock'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
