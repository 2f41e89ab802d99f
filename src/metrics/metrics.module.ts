import { Module } from '@nestjs/common';
import { IdHistoryModule } from '../id-history/id-history.module';
import { LeaseModule } from '../lease/lease.module';
import { NumbersModule } from '../numbers/numbers.module';
import { QueueIdModule } from '../queue-id/queue-id.module';
import { SegmentModule } from '../segment/segment.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { HistorySampler } from './history.sampler';
import { MetricsController } from './metrics.controller';
import { MetricsLeader } from './metrics-leader';
import { MetricsService } from './metrics.service';
import { MetricsStateReader } from './metrics-state.reader';
import { MetricsTokenGuard } from './metrics-token.guard';

/** Prometheus metrics at GET /metrics (prom-client), and the in-memory history behind the dashboard's charts. */
@Module({
  imports: [QueueIdModule, SegmentModule, SnowflakeModule, LeaseModule, NumbersModule, IdHistoryModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsStateReader, MetricsLeader, MetricsTokenGuard, HistorySampler],
  exports: [HistorySampler],
})
export class MetricsModule {}
