import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { AppRegistry } from '../queue-id/core/app-registry';
import { QueueKeys } from '../queue-id/core/queue-keys';
import { RefillAhead } from '../queue-id/core/refill-ahead';
import { IdAllocRepository } from '../queue-id/id-alloc.repository';
import { SegmentStatus } from '../segment/segment-status';
import { SnowflakeStatus } from '../snowflake/snowflake-status';
import { StateSnapshot, StateSources, readStateSnapshot } from './state-snapshot';

/** Reads the state behind the gauges from Redis, MySQL and memory (uncached; MetricsService caches). */
@Injectable()
export class MetricsStateReader {
  private readonly sources: StateSources;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) redis: RedisClient,
    keys: QueueKeys,
    registry: AppRegistry,
    repo: IdAllocRepository,
    ahead: RefillAhead,
    segment: SegmentStatus,
    snowflake: SnowflakeStatus,
  ) {
    this.sources = {
      redis,
      keys,
      registry,
      repo,
      refillSize: (appId, shardId, step) => ahead.currentSize(appId, shardId, step),
      segment: () => segment.buffers(),
      snowflake: () => ({ mode: snowflake.mode, workerId: snowflake.workerId, serving: snowflake.serving }),
    };
  }

  read(): Promise<StateSnapshot> {
    return readStateSnapshot(this.sources);
  }
}
