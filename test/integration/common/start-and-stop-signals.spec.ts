import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { ProcessControl, ShutdownDeadline } from '../../../src/common/shutdown-deadline';
import { StartAbandoned, StartSignals } from '../../../src/common/start-signals';
import { runMigrationsLocked } from '../../../src/infra/database/migrate';
import { createApp } from '../../../src/bootstrap';
import { appSuite } from '../../support/app-suite';
import { rootQuery, testMysqlOptions } from '../../support/test-env';

class FakeProcess extends EventEmitter implements ProcessControl {
  readonly exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
}

/** A migration of two statements with a pause between them (MariaDB commits each DDL by itself). */
class SlowMigration1700000000001 implements MigrationInterface {
  name = 'SlowMigration1700000000001';
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE slow_first (id INT)');
    await runner.query('SELECT SLEEP(1)');
    await runner.query('CREATE TABLE slow_second (id INT)');
  }
  async down(): Promise<void> {}
}

describe('SIGTERM around the start', () => {
  const suite = appSuite('signals');

  beforeAll(() => {
    Logger.overrideLogger(['error']);
  });

  it('the shutdown deadline is armed with Nest\'s shutdown hooks, before the modules\' init runs', async () => {
    const before = process.listeners('SIGTERM');
    const app = await createApp(suite.env.config());
    try {
      const added = process.listeners('SIGTERM').filter((l) => !before.includes(l));
      const deadline: unknown = app.get(ShutdownDeadline);
      const arm = (deadline as { arm: () => void }).arm;
      // Nest's listener, then the deadline's: a SIGTERM while the modules initialise (app.init)
      // is bounded too, not only one after.
      expect(added).toHaveLength(2);
      expect(added.indexOf(arm)).toBe(1);
      await app.init();
    } finally {
      await app.close();
    }
    expect(process.listeners('SIGTERM').filter((l) => !before.includes(l))).toEqual([]);
  });

  it('a signal during a migration lets it finish, then the start is abandoned', async () => {
    const database = `${suite.env.database}_mig`;
    await rootQuery(`CREATE DATABASE \`${database}\``);
    const { host, port, user, password } = testMysqlOptions(database);
    const ds = new DataSource({
      type: 'mysql',
      host,
      port,
      username: user,
      password,
      database,
      migrations: [SlowMigration1700000000001],
      migrationsTableName: 'shardleaf_migrations',
    });
    await ds.initialize();
    const proc = new FakeProcess();
    const guard = StartSignals.install(8000, proc);
    try {
      const migrating = runMigrationsLocked(ds);
      await new Promise((resolve) => setTimeout(resolve, 300));
      proc.emit('SIGTERM', 'SIGTERM');
      await expect(migrating).rejects.toBeInstanceOf(StartAbandoned);
      expect(proc.exits).toEqual([]);
      const tables = await ds.query<Array<Record<string, string>>>("SHOW TABLES LIKE 'slow_%'");
      expect(tables.map((t) => Object.values(t)[0]).sort()).toEqual(['slow_first', 'slow_second']);
      expect(await ds.query('SELECT name FROM shardleaf_migrations')).toEqual([{ name: 'SlowMigration1700000000001' }]);
    } finally {
      guard.remove();
      await ds.destroy();
      await rootQuery(`DROP DATABASE IF EXISTS \`${database}\``);
    }
  });
});
