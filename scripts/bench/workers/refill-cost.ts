/**
 * Refill cost, in process against the bench database and Redis: for a step, N refills of empty
 * shards through the service's own ShardRefill; counts the DB round trips (every query
 * TypeORM sends, START TRANSACTION and COMMIT included) and Redis commands of each, and measures
 * Redis memory per queued ID (`MEMORY USAGE` of the full list ÷ its length).
 * Usage: refill-cost.ts '{"databaseUrl":…,"redisUrl":…,"keyPrefix":…,"steps":[1000,100000],"refills":N}'
 */
import 'reflect-metadata';
import Redis from 'ioredis';
import { DataSource, Logger as TypeOrmLogger } from 'typeorm';
import { loadConfig } from '../../../src/config/load-config';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { LockService } from '../../../src/infra/redis/lock.service';
import { AppRegistry } from '../../../src/queue-id/core/app-registry';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { IdAllocEntity } from '../../../src/queue-id/id-alloc.entity';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { refillParts } from '../../../test/support/refill-parts';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import { createPopConnection } from '../../../src/queue-id/redis/pop-connection';
import { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';

interface Spec {
  databaseUrl: string;
  redisUrl: string;
  keyPrefix: string;
  steps: number[];
  refills: number;
}

export interface RefillCost {
  step: number;
  refills: number;
  /** Median wall time of one whole refill (lock, LLEN, allocate, RPUSH, unlock), ms. */
  msPerRefill: number;
  /** Median time of the DB part alone (IdAllocRepository.allocate), ms. */
  msPerAllocate: number;
  dbRoundTripsPerRefill: number;
  redisCommandsPerRefill: number;
  /** Bytes of Redis memory per queued ID of a full list of `step` entries. */
  redisBytesPerId: number;
}

/** Counts what TypeORM sends: each logged query is one round trip to the server. */
class CountingLogger implements TypeOrmLogger {
  queries = 0;
  logQuery(): void {
    this.queries++;
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
  const config = loadConfig({
    DATABASE_URL: spec.databaseUrl,
    REDIS_URL: spec.redisUrl,
    KEY_PREFIX: spec.keyPrefix,
    SNOWFLAKE_MODE: 'off',
  });
  const counter = new CountingLogger();
  const dataSource = new DataSource({ ...typeormOptions(config.database), entities: [IdAllocEntity], logger: counter, logging: true });
  await dataSource.initialize();
  await dataSource.runMigrations();
  const redis = new Redis(spec.redisUrl);
  let redisCommands = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<typeof send>) => {
    redisCommands++;
    return send(...args);
  };
  const repo = new IdAllocRepository(dataSource);
  const keys = new QueueKeys(spec.keyPrefix);
  const replicaAck = new ReplicaAckService(config.queue, redis);
  const lists = new RedisQueueLists(redis, keys, replicaAck, createPopConnection(redis, config.redis, replicaAck.enabled));
  const refill = refillParts(config.queue, { lists, keys, locks: new LockService(redis), repo, registry: new AppRegistry() }).shardRefill;
  const results: RefillCost[] = [];
  for (const [i, step] of spec.steps.entries()) {
    const appId = 250 + i;
    await repo.retireApp(appId);
    await repo.createApp({ appId, appName: `bench-refill-${step}`, step, maxLimitId: 0n, description: null }, 64);
    const refillMs: number[] = [];
    const allocMs: number[] = [];
    let trips = 0;
    let commands = 0;
    const refills = Math.min(spec.refills, 32);
    for (let shard = 0; shard < refills; shard++) {
      await redis.del(keys.list(appId, shard));
      const q0 = counter.queries;
      const c0 = redisCommands;
      const t0 = process.hrtime.bigint();
      const result = await refill.refill({ appId: appId, shardId: shard }, { skipIfAtLeast: 1, minWanted: 1, lockRetries: 0 });
      refillMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      trips += counter.queries - q0;
      commands += redisCommands - c0;
      if (result.status !== 'refilled' || result.pushed !== step) {
        throw new Error(`refill of ${appId}/${shard}: ${result.status}, ${result.pushed} pushed`);
      }
      // The DB part alone, on the next shards' rows.
      const t1 = process.hrtime.bigint();
      await repo.allocate(appId, 32 + shard, 1);
      allocMs.push(Number(process.hrtime.bigint() - t1) / 1e6);
    }
    const listKey = keys.list(appId, 0);
    const bytes = Number(await redis.call('MEMORY', 'USAGE', listKey, 'SAMPLES', '0'));
    const length = await redis.llen(listKey);
    results.push({
      step,
      refills,
      msPerRefill: median(refillMs),
      msPerAllocate: median(allocMs),
      dbRoundTripsPerRefill: trips / refills,
      redisCommandsPerRefill: commands / refills,
      redisBytesPerId: bytes / length,
    });
    for (let shard = 0; shard < 64; shard++) {
      await redis.del(keys.list(appId, shard));
    }
    await repo.retireApp(appId);
  }
  console.log(JSON.stringify(results));
  redis.disconnect();
  await dataSource.destroy();
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
