import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/admin.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { AdminSnowflakeController } from './admin-snowflake.controller';
import { DashboardController } from './dashboard.controller';

/** The admin dashboard page and the snowflake status route it reads. */
@Module({
  imports: [AdminModule, SnowflakeModule],
  controllers: [DashboardController, AdminSnowflakeController],
})
export class DashboardModule {}
