import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { LockService } from './lock.service';
import { REDIS } from './redis.tokens';


/** One ioredis client per instance; commands fail fast while Redis is away instead of hanging. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Redis => {
        const logger = new Logger('Redis');
        const client = new Redis(config.redis.url, {
          maxRetriesPerRequest: 1,
          connectTimeout: 3000,
          retryStrategy: (times) => Math.min(times * 100, 2000),
        });
        let lastError = '';
        client.on('error', (err: Error) => {
          // ioredis repeats the same error on every reconnect attempt: log changes only.
          if (err.message !== lastError) {
            lastError = err.message;
            logger.warn(`redis error: ${err.message}`);
          }
        });
        client.on('ready', () => {
          lastError = '';
        });
        return client;
      },
    },
    LockService,
  ],
  exports: [REDIS, LockService],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
