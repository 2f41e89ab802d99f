import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { assertUnreachable } from '../common/error-catalog';
import { RedisConfig } from '../config/redis-config';
import { SnowflakeConfig, redisLeaseMarginMs } from '../config/snowflake-config';
import { createRedisClient } from '../infra/redis/redis-client.factory';
import { ZookeeperClient } from '../infra/zookeeper/zookeeper-client';
import { Clock, systemMonotonicClock } from './core/clock';
import { layoutNamed } from './core/snowflake-layout';
import { WorkerIdRegistry } from './core/worker-id-registry';
import { LocalRegistry } from './registries/local.registry';
import { MysqlRegistry } from './registries/mysql.registry';
import { RedisRegistry } from './registries/redis.registry';
import { RedisWorkerLeaseStore } from './registries/redis-worker-lease-store';
import { WorkerIdAllocRepository } from './registries/worker-id-alloc.repository';
import { WorkerIdCacheFile } from './registries/worker-id-cache-file';
import { ZkNormalRegistry } from './registries/zk-normal.registry';
import { ZkRecycleRegistry } from './registries/zk-recycle.registry';

/**
 * Bound of each registry call to MySQL or Redis: a frozen backend fails a report (retried at the
 * next one) instead of holding it; within the report interval, at most 2 s.
 */
function callTimeoutMs(config: SnowflakeConfig): number {
  return Math.max(100, Math.min(2000, config.reportIntervalMs));
}

/**
 * The registry of SNOWFLAKE_MODE (null for `off`). Nothing connects until `register`, except the
 * redis mode's own Redis connection (created here, closed by the registry).
 */
/** REDIS_WAIT_REPLICAS and REDIS_WAIT_TIMEOUT_MS (the queue's settings, shared by the redis registry). */
export interface ReplicaWait {
  waitReplicas: number;
  waitTimeoutMs: number;
}

export function createRegistry(
  config: SnowflakeConfig,
  redis: RedisConfig,
  replicaWait: ReplicaWait,
  dataSource: DataSource,
  clock: Clock,
): WorkerIdRegistry | null {
  const { ip, port, name } = config;
  const maxWorkerId = layoutNamed(config.layout).maxWorkerId;
  // A crash leaves a recorded time up to the record-ahead window ahead: a start waits that out.
  const startAllowanceMs = config.recordAheadMs + config.clockToleranceMs;
  const livenessMs = config.recordAheadMs;
  const cacheFile = (mode: string) => new WorkerIdCacheFile(join(config.cacheDir, `workId-${mode}-${name}-${port}.json`));
  switch (config.mode) {
    case 'off':
      return null;
    case 'local':
      return new LocalRegistry({ ip, port, workerIdMap: config.workerIdMap, cacheFile: cacheFile('local'), startAllowanceMs, maxWorkerId });
    case 'mysql':
      return new MysqlRegistry({
        ip,
        port,
        repository: new WorkerIdAllocRepository(dataSource, callTimeoutMs(config)),
        livenessMs,
        startAllowanceMs,
        clock,
        maxWorkerId,
        // Twice the liveness window: a holder silent that long stopped issuing one window ago.
        recycleAfterMs: 2 * livenessMs,
      });
    case 'zk_normal':
      return new ZkNormalRegistry({
        zk: new ZookeeperClient(config.zk),
        name,
        ip,
        port,
        cacheFile: cacheFile('zk_normal'),
        livenessMs,
        startAllowanceMs,
        clock,
        maxWorkerId,
      });
    case 'zk_recycle':
      return new ZkRecycleRegistry({
        zk: new ZookeeperClient(config.zk),
        name,
        ip,
        port,
        leaseMs: config.leaseMs,
        leaseMarginMs: config.leaseMarginMs,
        maxWorkerId,
      });
    case 'redis': {
      const marginMs = redisLeaseMarginMs(config.leaseTtlMs);
      const { waitReplicas, waitTimeoutMs } = replicaWait;
      return new RedisRegistry({
        store: new RedisWorkerLeaseStore(createRedisClient(redis), `${redis.keyPrefix}snowflake:${name}:leases`, {
          // A promoted replica's clock may be behind by up to the margin the holders keep.
          serverSkewMs: marginMs,
          // After a new epoch every holder from before has stopped, by every instance's clock
          // (the peer clock check bounds their difference; the margin covers less than that).
          epochWaitMs: config.leaseTtlMs + config.peerMaxSkewMs,
          waitReplicas,
          waitTimeoutMs,
        }),
        identity: `${ip}:${port}`,
        ttlMs: config.leaseTtlMs,
        marginMs,
        maxWorkerId,
        // A free id's recorded time is at most about a TTL ahead (renewals record now + TTL).
        allowanceMs: config.leaseTtlMs + config.clockToleranceMs,
        // A claim or renewal is followed by its WAIT when replicas must confirm it.
        callTimeoutMs: callTimeoutMs(config) + (waitReplicas > 0 ? waitTimeoutMs : 0),
        clock,
        monotonic: systemMonotonicClock,
      });
    }
    default:
      return assertUnreachable(config.mode);
  }
}
