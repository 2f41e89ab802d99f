import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { DashboardController } from './dashboard.controller';
import { DashboardHistoryController } from './dashboard-history.controller';

/** The admin dashboard page and the chart history route it reads (it also calls each feature's admin API). */
@Module({
  imports: [MetricsModule],
  controllers: [DashboardController, DashboardHistoryController],
})
export class DashboardModule {}
