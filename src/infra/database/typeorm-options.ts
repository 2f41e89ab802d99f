import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { MIGRATIONS } from './migration-list';

export const MIGRATIONS_TABLE = 'shardleaf_migrations';

/**
 * The connection settings shared by the service, the migration entry (migrate-main.ts) and the
 * TypeORM CLI. No entities: the service's feature modules register theirs (TypeOrmModule.forFeature,
 * DatabaseModule), and migrations are plain SQL that need none.
 */
export function typeormOptions(db: AppConfig['database']): DataSourceOptions {
  return {
    type: 'mysql',
    host: db.host,
    port: db.port,
    username: db.user,
    password: db.password,
    database: db.database,
    migrations: MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    // Migrations run under a named lock at start (see migrate.ts), never implicitly.
    migrationsRun: false,
    synchronize: false,
    logging: ['error'],
    // BIGINT columns come back as strings; convert with BigInt(), never through number.
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    timezone: 'Z',
    poolSize: db.poolSize,
    // TCP keepalive probes after 10 s idle (as the Redis connections): a vanished peer is found on an idle connection.
    extra: { connectTimeout: 5000, enableKeepAlive: true, keepAliveInitialDelay: 10_000 },
  };
}
