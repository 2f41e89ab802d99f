import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminAppsController } from './admin/admin-apps.controller';
import { AdminAppsService } from './admin/admin-apps.service';
import { AppRegistry } from './core/app-registry';
import { LengthReads } from './core/length-reads';
import { QueueKeys } from './core/queue-keys';
import { QueueLists } from './core/queue-lists';
import { RefillAhead } from './core/refill-ahead';
import { IdAllocEntity } from './id-alloc.entity';
import { IdAllocRepository } from './id-alloc.repository';
import { IdAllocHistoryRepository } from './history/id-alloc-history.repository';
import { QueueHistoryController } from './history/queue-history.controller';
import { AppRegistrySync } from './app-registry-sync.service';
import { LeaseModule } from '../lease/lease.module';
import { QueueIdController } from './queue-id.controller';
import { QueueIdScheduler } from './queue-id.scheduler';
import { QueueIdService } from './queue-id.service';
import { QueueLeaseController } from './queue-lease.controller';
import { QueueLeaseService } from './queue-lease.service';
import { QueueStatus } from './queue-status';
import { QueueStatePort, QueueStateReader } from './queue-state.port';
import { POP_CONNECTION, createPopConnection } from './redis/pop-connection';
import { RedisQueueLists } from './redis/redis-queue-lists';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { QUEUE_CONFIG, QueueConfig, REDIS_CONFIG } from '../config/config-tokens';
import { RedisConfig } from '../config/redis-config';
import { RefillMonitor } from './refill-monitor';
import { BackgroundRefills } from './refill/background-refills';
import { LowListSweep } from './refill/low-list-sweep';
import { OnDemandTake } from './refill/on-demand-take';
import { SegmentAllocation } from './refill/segment-allocation';
import { QueueLocks } from './queue-locks';
import { ShardRefill } from './refill/shard-refill';
import { RequestPops } from './request-pops';
import { ReplicaAckService } from './redis/replica-ack.service';

@Module({
  imports: [TypeOrmModule.forFeature([IdAllocEntity]), LeaseModule],
  controllers: [QueueIdController, QueueLeaseController, AdminAppsController, QueueHistoryController],
  providers: [
    { provide: AppRegistry, useFactory: () => new AppRegistry() },
    { provide: RefillMonitor, useFactory: () => new RefillMonitor() },
    // Shared by the request path (RequestPops) and the reload that voids it (AppRegistrySync).
    { provide: LengthReads, useFactory: () => new LengthReads() },
    // The one naming of the queue's Redis keys (lists, markers, locks) for this KEY_PREFIX.
    { provide: QueueKeys, inject: [REDIS_CONFIG], useFactory: (redis: RedisConfig) => new QueueKeys(redis.keyPrefix) },
    // The lists behind their port: the services see QueueLists, only RedisQueueLists sees Redis.
    { provide: QueueLists, useClass: RedisQueueLists },
    {
      provide: POP_CONNECTION,
      inject: [REDIS, REDIS_CONFIG, ReplicaAckService],
      useFactory: (redis: RedisClient, config: RedisConfig, replicaAck: ReplicaAckService) => createPopConnection(redis, config, replicaAck.enabled),
    },
    {
      provide: RefillAhead,
      inject: [QUEUE_CONFIG],
      useFactory: (queue: QueueConfig) =>
        new RefillAhead({
          idleRatio: queue.idleRatio,
          targetMs: queue.refillTargetMs,
          maxSize: queue.refillMaxSize,
        }),
    },
    IdAllocRepository,
    IdAllocHistoryRepository,
    AppRegistrySync,
    SegmentAllocation,
    QueueLocks,
    ShardRefill,
    OnDemandTake,
    BackgroundRefills,
    LowListSweep,
    RequestPops,
    ReplicaAckService,
    QueueIdService,
    QueueIdScheduler,
    QueueLeaseService,
    AdminAppsService,
    QueueStatus,
    { provide: QueueStatePort, useClass: QueueStateReader },
  ],
  exports: [QueueStatus, AppRegistry, RefillAhead, IdAllocRepository, RefillMonitor, QueueKeys, QueueStatePort],
})
export class QueueIdModule {}
