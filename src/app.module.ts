import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ErrorLogShutdown } from './common/error-log';
import { ShutdownDeadline } from './common/shutdown-deadline';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DatabaseModule } from './infra/database/database.module';
import { HealthModule } from './health/health.module';
import { IdHistoryModule } from './id-history/id-history.module';
import { HomeModule } from './home/home.module';
import { MetricsModule } from './metrics/metrics.module';
import { NumbersModule } from './numbers/numbers.module';
import { OpenApiModule } from './openapi/openapi.module';
import { RedisModule } from './infra/redis/redis.module';
import { SegmentModule } from './segment/segment.module';
import { SnowflakeModule } from './snowflake/snowflake.module';
import { QueueIdModule } from './queue-id/queue-id.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ScheduleModule.forRoot(),
        DatabaseModule,
        RedisModule,
        QueueIdModule,
        SegmentModule,
        SnowflakeModule,
        NumbersModule,
        IdHistoryModule,
        HealthModule,
        MetricsModule,
        DashboardModule,
        OpenApiModule,
        HomeModule,
      ],
      providers: [ShutdownDeadline, ErrorLogShutdown],
    };
  }
}
