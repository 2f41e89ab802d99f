import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DATABASE_CONFIG, DatabaseConfig, REDIS_CONFIG, SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { RedisConfig } from '../config/redis-config';
import { SnowflakeConfig } from '../config/snowflake-config';
import { backendLabel, failureWords } from '../infra/backend-words';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';
import { ZookeeperClient } from '../infra/zookeeper/zookeeper-client';
import { withTimeout } from '../common/with-timeout';
import { QueueStatus } from '../queue-id/queue-status';

const PROBE_TIMEOUT_MS = 2000;

/**
 * One round trip to each backend (Redis: its client and the queue's pop connection, at once);
 * each probe rejects when its backend does not answer in time, with a message in our words naming
 * the backend, its variable and address (backend-words.ts).
 */
@Injectable()
export class BackendProbes implements OnApplicationShutdown {
  private zk: ZookeeperClient | null = null;
  /** The Redis client's last connection error, for "not connected (last error: …)". */
  private lastRedisError: unknown = null;
  /** What the messages name: the MySQL and Redis addresses and variables. */
  private readonly config: { database: DatabaseConfig; redis: RedisConfig };

  constructor(
    @Inject(DATABASE_CONFIG) database: DatabaseConfig,
    @Inject(REDIS_CONFIG) redisConfig: RedisConfig,
    @Inject(SNOWFLAKE_CONFIG) private readonly snowflake: SnowflakeConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly dataSource: DataSource,
    private readonly queue: QueueStatus,
  ) {
    this.config = { database, redis: redisConfig };
    redis.on('error', (err: unknown) => {
      this.lastRedisError = err;
    });
    redis.on('ready', () => {
      this.lastRedisError = null;
    });
  }

  /** ZooKeeper is a dependency only in the zk_normal and zk_recycle snowflake modes. */
  get usesZookeeper(): boolean {
    return this.snowflake.mode === 'zk_normal' || this.snowflake.mode === 'zk_recycle';
  }

  async mysql(): Promise<void> {
    try {
      await withTimeout(this.dataSource.query('SELECT 1'), PROBE_TIMEOUT_MS, 'MySQL');
    } catch (err) {
      throw new Error(`${backendLabel('mysql', this.config)} ${failureWords(err)}`, { cause: err });
    }
  }

  /**
   * PING on the ioredis client and, at the same time, on the queue's pop connection
   * (QueueStatus.pingPopConnection: on a standalone Redis the queue IDs pop there). Either one
   * failing makes Redis down: the client's failure is reported first, the pop connection's says so.
   */
  async redisPing(): Promise<void> {
    // Settled to its failure (or null), never rejected: awaited after the client's PING.
    const pops = withTimeout(this.queue.pingPopConnection(), PROBE_TIMEOUT_MS, 'Redis').then(
      () => null,
      (err: unknown) => err,
    );
    let reply: string;
    try {
      reply = await withTimeout(this.redis.ping(), PROBE_TIMEOUT_MS, 'Redis');
    } catch (err) {
      const words = failureWords(err, this.config);
      const last = this.lastRedisError === null ? '' : ` (last connection error: it ${failureWords(this.lastRedisError, this.config)})`;
      throw new Error(`${backendLabel('redis', this.config)} ${words}${words === 'is not connected' ? last : ''}`, { cause: err });
    }
    if (reply !== 'PONG') {
      throw new Error(`${backendLabel('redis', this.config)} answered '${reply}' to PING`);
    }
    const popFailure = await pops;
    if (popFailure !== null) {
      throw new Error(`${backendLabel('redis', this.config)} ${failureWords(popFailure, this.config)} on the pop connection (queue ID pops)`, {
        cause: popFailure,
      });
    }
  }

  async zookeeper(): Promise<void> {
    this.zk ??= new ZookeeperClient({
      address: this.snowflake.zk.address,
      sessionTimeoutMs: this.snowflake.zk.sessionTimeoutMs,
      connectTimeoutMs: PROBE_TIMEOUT_MS,
    });
    await withTimeout(this.zk.getChildren('/'), PROBE_TIMEOUT_MS, 'ZooKeeper');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.zk?.close();
    this.zk = null;
  }
}
