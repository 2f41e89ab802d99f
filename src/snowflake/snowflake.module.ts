import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { QUEUE_CONFIG, QueueConfig, REDIS_CONFIG, SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { RedisConfig } from '../config/redis-config';
import { SnowflakeConfig } from '../config/snowflake-config';
import { Clock, systemClock } from './core/clock';
import { PeerClockService } from './peer-clock.service';
import { createRegistry } from './registry.factory';
import { SnowflakeAdminController } from './snowflake-admin.controller';
import { SnowflakeController } from './snowflake.controller';
import { SnowflakeService } from './snowflake.service';
import { SnowflakeStatus } from './snowflake-status';
import { SnowflakeClockWaits } from './clock-waits';
import { SnowflakeReports } from './snowflake-reports';
import { SNOWFLAKE_BASE_CLOCK, SNOWFLAKE_CLOCK, WORKER_ID_REGISTRY } from './snowflake.tokens';

@Module({
  controllers: [SnowflakeController, SnowflakeAdminController],
  providers: [
    { provide: SNOWFLAKE_BASE_CLOCK, useValue: systemClock },
    {
      provide: SNOWFLAKE_CLOCK,
      inject: [SNOWFLAKE_BASE_CLOCK, SnowflakeClockWaits],
      useFactory: (clock: Clock, waits: SnowflakeClockWaits) => waits.observe(clock),
    },
    { provide: SnowflakeClockWaits, useFactory: () => new SnowflakeClockWaits() },
    { provide: SnowflakeReports, useFactory: () => new SnowflakeReports() },
    {
      provide: WORKER_ID_REGISTRY,
      inject: [SNOWFLAKE_CONFIG, REDIS_CONFIG, QUEUE_CONFIG, DataSource, SNOWFLAKE_BASE_CLOCK],
      // The registries' waits (for a crashed predecessor's ownership to lapse) are not clock waits.
      useFactory: (snowflake: SnowflakeConfig, redis: RedisConfig, queue: QueueConfig, dataSource: DataSource, clock: Clock) =>
        createRegistry(snowflake, redis, queue, dataSource, clock),
    },
    PeerClockService,
    SnowflakeService,
    SnowflakeStatus,
  ],
  exports: [SnowflakeStatus, SnowflakeClockWaits, SnowflakeReports],
})
export class SnowflakeModule {}
