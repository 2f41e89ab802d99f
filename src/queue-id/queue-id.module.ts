import { Module } from '@nestjs/common';
import { AppRegistry } from './core/app-registry';
import { IdAllocRepository } from './id-alloc.repository';
import { QueueConfigService } from './queue-config.service';
import { QueueIdController } from './queue-id.controller';
import { QueueIdScheduler } from './queue-id.scheduler';
import { QueueIdService } from './queue-id.service';
import { QueueRefillService } from './queue-refill.service';
import { RefillMonitor } from './refill-monitor';
import { ReplicaAckService } from './replica-ack.service';

@Module({
  controllers: [QueueIdController],
  providers: [
    { provide: AppRegistry, useFactory: () => new AppRegistry() },
    { provide: RefillMonitor, useFactory: () => new RefillMonitor() },
    IdAllocRepository,
    QueueConfigService,
    QueueRefillService,
    ReplicaAckService,
    QueueIdService,
    QueueIdScheduler,
  ],
  exports: [AppRegistry, IdAllocRepository, QueueConfigService, QueueRefillService, RefillMonitor],
})
export class QueueIdModule {}
