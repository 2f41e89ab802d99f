import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
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
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): RedisClient => createRedisClient(config.redis),
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
