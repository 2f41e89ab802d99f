import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
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
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
