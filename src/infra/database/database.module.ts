import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { runMigrationsLocked } from './migrate';
import { typeormOptions } from './typeorm-options';

/**
 * The TypeORM DataSource (mysql2). Initialised at module init; pending migrations are applied
 * under a lock unless DB_MIGRATIONS_RUN=false.
 */
@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<DataSource> => {
        const dataSource = new DataSource(typeormOptions(config.database));
        await dataSource.initialize();
        if (config.database.migrationsRun) {
          const applied = await runMigrationsLocked(dataSource);
          if (applied.length > 0) {
            new Logger('Database').log(`applied migrations: ${applied.join(', ')}`);
          }
        }
        return dataSource;
      },
    },
  ],
  exports: [DataSource],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) {
      await this.dataSource.destroy();
    }
  }
}
