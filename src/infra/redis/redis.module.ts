import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { REDIS_CONFIG } from '../../config/config-tokens';
import { RedisConfig } from '../../config/redis-config';
import { disconnectNow } from './disconnect-now';
import { LockService } from './lock.service';
import { createRedisClient } from './redis-client.factory';
import { REDIS, RedisClient } from './redis.tokens';

/** One ioredis client per instance (standalone, Sentinel or Cluster; see redis-client.factory.ts). */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [REDIS_CONFIG],
      useFactory: (redis: RedisConfig): RedisClient => createRedisClient(redis),
    },
    LockService,
  ],
  exports: [REDIS, LockService],
})
export class RedisModule implements OnApplicationShutdown {
  private closed = false;

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  /** Closes the client once: an application closed twice runs its shutdown hooks twice. */
  async onApplicationShutdown(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    try {
      await this.redis.quit();
    } catch {
      disconnectNow(this.redis);
    }
  }
}
