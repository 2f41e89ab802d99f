import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { assertUnreachable } from '../common/error-catalog';
import { SnowflakeConfig } from '../config/snowflake-config';
import { ZookeeperClient } from '../infra/zookeeper/zookeeper-client';
import { Clock } from './core/clock';
import { WorkerIdRegistry } from './core/worker-id-registry';
import { LocalRegistry } from './registries/local.registry';
import { MysqlRegistry } from './registries/mysql.registry';
import { WorkerIdAllocRepository } from './registries/worker-id-alloc.repository';
import { WorkerIdCacheFile } from './registries/worker-id-cache-file';
import { ZkNormalRegistry } from './registries/zk-normal.registry';
import { ZkRecycleRegistry } from './registries/zk-recycle.registry';

/** The registry of SNOWFLAKE_MODE (null for `off`). Nothing connects until `register`. */
export function createRegistry(config: SnowflakeConfig, dataSource: DataSource, clock: Clock): WorkerIdRegistry | null {
  const { ip, port, name } = config;
  // A crash leaves a recorded time up to the record-ahead window ahead: a start waits that out.
  const startAllowanceMs = config.recordAheadMs + config.clockToleranceMs;
  const livenessMs = config.recordAheadMs;
  const cacheFile = (mode: string) => new WorkerIdCacheFile(join(config.cacheDir, `workId-${mode}-${name}-${port}.json`));
  switch (config.mode) {
    case 'off':
      return null;
    case 'local':
      return new LocalRegistry({ ip, port, workerIdMap: config.workerIdMap, cacheFile: cacheFile('local'), startAllowanceMs });
    case 'mysql':
      return new MysqlRegistry({
        ip,
        port,
        repository: new WorkerIdAllocRepository(dataSource),
        livenessMs,
        startAllowanceMs,
        clock,
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
      });
    case 'zk_recycle':
      return new ZkRecycleRegistry({
        zk: new ZookeeperClient(config.zk),
        name,
        ip,
        port,
        leaseMs: config.leaseMs,
        leaseMarginMs: config.leaseMarginMs,
      });
    default:
      return assertUnreachable(config.mode);
  }
}
