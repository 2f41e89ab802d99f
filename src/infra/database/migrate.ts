import { DataSource } from 'typeorm';
import { uninterrupted } from '../../common/start-signals';

const LOCK_PREFIX = 'shardleaf_migrations:';

/**
 * Applies pending migrations under MySQL's GET_LOCK so that instances starting together do not
 * run the same migration twice. Returns the names of the migrations applied.
 */
export async function runMigrationsLocked(dataSource: DataSource, timeoutSeconds = 60): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    // GET_LOCK names are server-wide: one lock per database, so databases migrate independently.
    const lockName = `${LOCK_PREFIX}${dataSource.options.database as string}`.slice(0, 64);
    const rows = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [lockName, timeoutSeconds])) as Array<{
      locked: number | string | null;
    }>;
    if (Number(rows[0]?.locked) !== 1) {
      throw new Error(`could not take the migration lock '${lockName}' within ${timeoutSeconds}s`);
    }
    try {
      // A signal meanwhile lets them finish, then abandons the start (common/start-signals.ts).
      const applied = await uninterrupted(() => dataSource.runMigrations({ transaction: 'each' }));
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [lockName]);
    }
  } finally {
    await runner.release();
  }
}
