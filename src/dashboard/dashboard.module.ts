import { Module } from '@nestjs/common';
import { AdminModule } from '../queue-id/admin/admin.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { AdminSnowflakeController } from '../snowflake/snowflake-admin.controller';
import { DashboardController } from './dashboard.controller';
import { DashboardHistoryController } from './dashboard-history.controller';

/** The admin dashboard page, the snowflake status and the chart history routes it reads. */
@Module({
  imports: [AdminModule, SnowflakeModule, MetricsModule],
  controllers: [DashboardController, AdminSnowflakeController, DashboardHistoryController],
})
export class DashboardModule {}
