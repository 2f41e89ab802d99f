import { DataSource } from 'typeorm';

const LOCK_NAME = 'shardleaf_migrations';

/**
 * Applies pending migrations under MySQL's GET_LOCK so that instances starting together do not
 * run the same migration twice. Returns the names of the migrations applied.
 */
export async function runMigrationsLocked(dataSource: DataSource, timeoutSeconds = 60): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const rows = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [
      LOCK_NAME,
      timeoutSeconds,
    ])) as Array<{ locked: number | string | null }>;
    if (Number(rows[0]?.locked) !== 1) {
      throw new Error(`could not take the migration lock '${LOCK_NAME}' within ${timeoutSeconds}s`);
    }
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
    }
  } finally {
    await runner.release();
  }
}
