import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { QueueIdModule } from '../queue-id/queue-id.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/** Prometheus metrics at GET /metrics (prom-client). */
@Module({
  imports: [QueueIdModule, SnowflakeModule, HealthModule],
  controllers: [MetricsController],
  providers: [MetricsService],
})
export class MetricsModule {}
