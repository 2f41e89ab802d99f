import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { systemClock } from './core/clock';
import { PeerClockService } from './peer-clock.service';
import { createRegistry } from './registry.factory';
import { SnowflakeController } from './snowflake.controller';
import { SnowflakeService } from './snowflake.service';
import { SNOWFLAKE_CLOCK, WORKER_ID_REGISTRY } from './snowflake.tokens';

@Module({
  controllers: [SnowflakeController],
  providers: [
    { provide: SNOWFLAKE_CLOCK, useValue: systemClock },
    {
      provide: WORKER_ID_REGISTRY,
      inject: [APP_CONFIG, DataSource],
      useFactory: (config: AppConfig, dataSource: DataSource) => createRegistry(config.snowflake, dataSource),
    },
    PeerClockService,
    SnowflakeService,
  ],
  exports: [SnowflakeService],
})
export class SnowflakeModule {}
