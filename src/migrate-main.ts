import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { AppConfig } from './config/app-config';
import { loadConfigOrExit } from './config/load-config-or-exit';
import { backendLabel, failureWords } from './infra/backend-words';
import { runMigrationsLocked } from './infra/database/migrate';
import { typeormOptions } from './infra/database/typeorm-options';

/**
 * Applies pending migrations and exits, for deployments that start the service with
 * DB_MIGRATIONS_RUN=false (a migration job before a rollout). Same configuration as the service,
 * same named lock as its start; prints one line per migration applied (TypeORM logs only errors).
 * Run it as `node dist/src/migrate-main.js` (in the image: `podman run --rm IMAGE dist/src/migrate-main.js`).
 */
async function main(config: AppConfig): Promise<void> {
  const { database } = config;
  const dataSource = new DataSource(typeormOptions(database));
  try {
    await dataSource.initialize();
  } catch (err) {
    // One line in our words: which backend, which variable, where, what is wrong.
    throw new Error(`${backendLabel('mysql', config)} ${failureWords(err)}`, { cause: err });
  }
  try {
    const applied = await runMigrationsLocked(dataSource);
    const target = `${database.host}:${database.port}/${database.database}`;
    if (applied.length === 0) {
      console.log(`${target}: no pending migrations`);
    }
    for (const name of applied) {
      console.log(`${target}: applied ${name}`);
    }
  } finally {
    await dataSource.destroy();
  }
}

main(loadConfigOrExit(process.env)).catch((err: unknown) => {
  console.error('migrations failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
