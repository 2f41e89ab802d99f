import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { ZookeeperClient } from '../infra/zookeeper/zookeeper-client';
import { withTimeout } from './with-timeout';

const PROBE_TIMEOUT_MS = 2000;

/** One round trip to each backend; each probe rejects when its backend does not answer in time. */
@Injectable()
export class BackendProbes implements OnApplicationShutdown {
  private zk: ZookeeperClient | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly dataSource: DataSource,
  ) {}

  /** ZooKeeper is a dependency only in the zk_normal and zk_recycle snowflake modes. */
  get usesZookeeper(): boolean {
    return this.config.snowflake.mode === 'zk_normal' || this.config.snowflake.mode === 'zk_recycle';
  }

  async mysql(): Promise<void> {
    await withTimeout(this.dataSource.query('SELECT 1'), PROBE_TIMEOUT_MS, 'MySQL');
  }

  async redisPing(): Promise<void> {
    const reply: string = await withTimeout(this.redis.ping(), PROBE_TIMEOUT_MS, 'Redis');
    if (reply !== 'PONG') {
      throw new Error(`Redis answered '${reply}' to PING`);
    }
  }

  async zookeeper(): Promise<void> {
    this.zk ??= new ZookeeperClient({
      address: this.config.snowflake.zk.address,
      sessionTimeoutMs: this.config.snowflake.zk.sessionTimeoutMs,
      connectTimeoutMs: PROBE_TIMEOUT_MS,
    });
    await withTimeout(this.zk.getChildren('/'), PROBE_TIMEOUT_MS, 'ZooKeeper');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.zk?.close();
    this.zk = null;
  }
}
