import { Module } from '@nestjs/common';
import { AppRegistry } from './core/app-registry';
import { IdAllocRepository } from './id-alloc.repository';
import { QueueConfigService } from './queue-config.service';
import { QueueIdController } from './queue-id.controller';
import { QueueIdScheduler } from './queue-id.scheduler';
import { QueueIdService } from './queue-id.service';
import { QueueRefillService } from './queue-refill.service';

@Module({
  controllers: [QueueIdController],
  providers: [
    { provide: AppRegistry, useFactory: () => new AppRegistry() },
    IdAllocRepository,
    QueueConfigService,
    QueueRefillService,
    QueueIdService,
    QueueIdScheduler,
  ],
  exports: [AppRegistry, IdAllocRepository, QueueConfigService, QueueRefillService],
})
export class QueueIdModule {}
