import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Clock, offsetClock, systemClock } from './core/clock';
import { PeerClockService } from './peer-clock.service';
import { createRegistry } from './registry.factory';
import { SnowflakeAdminController } from './snowflake-admin.controller';
import { SnowflakeController } from './snowflake.controller';
import { SnowflakeService } from './snowflake.service';
import { SnowflakeStatus } from './snowflake-status';
import { SnowflakeClockWaits } from './clock-waits';
import { SNOWFLAKE_CLOCK, WORKER_ID_REGISTRY } from './snowflake.tokens';

function baseClock(config: AppConfig): Clock {
  return config.testHooks.clockOffsetMs === 0 ? systemClock : offsetClock(config.testHooks.clockOffsetMs);
}

@Module({
  controllers: [SnowflakeController, SnowflakeAdminController],
  providers: [
    {
      provide: SNOWFLAKE_CLOCK,
      inject: [APP_CONFIG, SnowflakeClockWaits],
      // TEST_CLOCK_OFFSET_MS (chaos tests only) plays a clock that is behind or ahead.
      useFactory: (config: AppConfig, waits: SnowflakeClockWaits) => waits.observe(baseClock(config)),
    },
    { provide: SnowflakeClockWaits, useFactory: () => new SnowflakeClockWaits() },
    {
      provide: WORKER_ID_REGISTRY,
      inject: [APP_CONFIG, DataSource],
      // The registries' waits (for a crashed predecessor's ownership to lapse) are not clock waits.
      useFactory: (config: AppConfig, dataSource: DataSource) => createRegistry(config.snowflake, dataSource, baseClock(config)),
    },
    PeerClockService,
    SnowflakeService,
    SnowflakeStatus,
  ],
  exports: [SnowflakeStatus, SnowflakeClockWaits],
})
export class SnowflakeModule {}
