import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TEST_HOOKS, TestHooks } from '../common/test-hooks';
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
import { SnowflakeReports } from './snowflake-reports';
import { SNOWFLAKE_CLOCK, WORKER_ID_REGISTRY } from './snowflake.tokens';

/** The system clock, or (a test hook, never set in production) one that is behind or ahead. */
function baseClock(hooks: TestHooks): Clock {
  return hooks.clockOffsetMs === 0 ? systemClock : offsetClock(hooks.clockOffsetMs);
}

@Module({
  controllers: [SnowflakeController, SnowflakeAdminController],
  providers: [
    {
      provide: SNOWFLAKE_CLOCK,
      inject: [TEST_HOOKS, SnowflakeClockWaits],
      useFactory: (hooks: TestHooks, waits: SnowflakeClockWaits) => waits.observe(baseClock(hooks)),
    },
    { provide: SnowflakeClockWaits, useFactory: () => new SnowflakeClockWaits() },
    { provide: SnowflakeReports, useFactory: () => new SnowflakeReports() },
    {
      provide: WORKER_ID_REGISTRY,
      inject: [APP_CONFIG, DataSource, TEST_HOOKS],
      // The registries' waits (for a crashed predecessor's ownership to lapse) are not clock waits.
      useFactory: (config: AppConfig, dataSource: DataSource, hooks: TestHooks) =>
        createRegistry(config.snowflake, config.redis, config.queue, dataSource, baseClock(hooks)),
    },
    PeerClockService,
    SnowflakeService,
    SnowflakeStatus,
  ],
  exports: [SnowflakeStatus, SnowflakeClockWaits, SnowflakeReports],
})
export class SnowflakeModule {}
