import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { QueueIdModule } from '../queue-id/queue-id.module';
import { SnowflakeModule } from '../snowflake/snowflake.module';
import { BackendProbes } from './backend-probes';
import { GeneratorState } from './generator-state';
import { HealthController } from './health.controller';

/** GET /health/live and GET /health/ready (@nestjs/terminus). */
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), QueueIdModule, SnowflakeModule],
  controllers: [HealthController],
  providers: [BackendProbes, GeneratorState],
  exports: [BackendProbes, GeneratorState],
})
export class HealthModule {}
