import { Module } from '@nestjs/common';
import { LeaseMonitor } from './lease-monitor';

/** The one LeaseMonitor shared by the queue and segment lease routes and /metrics. */
@Module({
  providers: [{ provide: LeaseMonitor, useFactory: () => new LeaseMonitor() }],
  exports: [LeaseMonitor],
})
export class LeaseModule {}
