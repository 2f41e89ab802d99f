import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { QueueIdModule } from '../queue-id/queue-id.module';
import { SegmentModule } from '../segment/segment.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { BackendProbes } from './backend-probes';
import { GeneratorState } from './generator-state';
import { HealthController } from './health.controller';

/** GET /health/live and GET /health/ready (@nestjs/terminus). */
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), QueueIdModule, SegmentModule, SnowflakeModule],
  controllers: [HealthController],
  providers: [BackendProbes, GeneratorState],
})
export class HealthModule {}
