import { Inject, Injectable, Logger, Module } from '@nestjs/common';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { DATABASE_CONFIG, DatabaseConfig } from '../../config/config-tokens';
import { boundPool } from './bounded-pool';
import { runMigrationsLocked } from './migrate';
import { typeormOptions } from './typeorm-options';

/**
 * Bounds every MySQL call from here on (bounded-pool.ts). A provider constructed once the
 * DataSource is initialised and migrated, before any module's init hook queries it.
 */
@Injectable()
export class DatabaseBounds {
  constructor(@Inject(DATABASE_CONFIG) database: DatabaseConfig, dataSource: DataSource) {
    boundPool(dataSource, database.queryTimeoutMs);
  }
}

/**
 * The TypeORM DataSource (mysql2), through @nestjs/typeorm: each feature module registers its own
 * entities (`TypeOrmModule.forFeature`), gathered here by `autoLoadEntities`. Initialised at
 * module init, then pending migrations are applied under a lock unless DB_MIGRATIONS_RUN=false,
 * before anything else can use the connection. Closed at shutdown by TypeOrmModule.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [DATABASE_CONFIG],
      useFactory: (database: DatabaseConfig): TypeOrmModuleOptions => ({
        ...typeormOptions(database),
        autoLoadEntities: true,
        // Read by connectAndMigrate, which runs them under the lock (TypeORM's own run takes none).
        migrationsRun: database.migrationsRun,
        // An unreachable database fails the start at once instead of retrying for half a minute.
        toRetry: () => false,
      }),
      dataSourceFactory: connectAndMigrate,
    }),
  ],
  providers: [DatabaseBounds],
})
export class DatabaseModule {}

async function connectAndMigrate(options?: DataSourceOptions): Promise<DataSource> {
  if (options === undefined) {
    throw new Error('no TypeORM options');
  }
  const dataSource = new DataSource({ ...options, migrationsRun: false });
  await dataSource.initialize();
  if (options.migrationsRun) {
    try {
      const applied = await runMigrationsLocked(dataSource);
      if (applied.length > 0) {
        new Logger('Database').log(`applied migrations: ${applied.join(', ')}`);
      }
    } catch (err) {
      await dataSource.destroy();
      throw err;
    }
  }
  return dataSource;
}
