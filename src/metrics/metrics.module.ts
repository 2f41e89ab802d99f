import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { LeaseModule } from '../lease/lease.module';
import { QueueIdModule } from '../queue-id/queue-id.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';
import { MetricsStateReader } from './metrics-state.reader';
import { MetricsTokenGuard } from './metrics-token.guard';

/** Prometheus metrics at GET /metrics (prom-client). */
@Module({
  imports: [QueueIdModule, SnowflakeModule, HealthModule, LeaseModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsStateReader, MetricsTokenGuard],
})
export class MetricsModule {}
