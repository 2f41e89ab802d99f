/**
 * One cron sweep (LowListSweep.run, the service's own code) over every shard of
 * the bench database, in process: first with every list deleted (each shard refilled: what a cold
 * start does before it listens), then again with every list full (the steady-state sweep: lengths
 * only). Prints one JSON line.
 * Usage: scale-sweep.ts '{"databaseUrl":…,"redisUrl":…,"keyPrefix":…}'
 */
import 'reflect-metadata';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/load-config';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { LockService } from '../../../src/infra/redis/lock.service';
import { AppRegistry } from '../../../src/queue-id/core/app-registry';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { IdAllocEntity } from '../../../src/queue-id/id-alloc.entity';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { LowListSweep, SweepCounts } from '../../../src/queue-id/refill/low-list-sweep';
import { refillParts } from '../../../test/support/refill-parts';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import { createPopConnection } from '../../../src/queue-id/redis/pop-connection';
import { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';

interface Spec {
  databaseUrl: string;
  redisUrl: string;
  keyPrefix: string;
}

export interface SweepTimes {
  shards: number;
  /** Every list empty: every shard refilled. Wall time and this process's CPU time, ms. */
  fullMs: number;
  fullCpuMs: number;
  full: SweepCounts;
  /** Every list full: lengths read, nothing refilled. */
  steadyMs: number;
  steadyCpuMs: number;
  steady: SweepCounts;
}

async function timed(refill: LowListSweep): Promise<{ ms: number; cpuMs: number; sweep: SweepCounts }> {
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const sweep = await refill.run();
  const cpu = process.cpuUsage(cpu0);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000, sweep };
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
  const config = loadConfig({
    DATABASE_URL: spec.databaseUrl,
    REDIS_URL: spec.redisUrl,
    KEY_PREFIX: spec.keyPrefix,
    SNOWFLAKE_MODE: 'off',
  });
  const dataSource = new DataSource({ ...typeormOptions(config.database), entities: [IdAllocEntity] });
  await dataSource.initialize();
  const redis = new Redis(spec.redisUrl);
  const repo = new IdAllocRepository(dataSource);
  const registry = new AppRegistry();
  registry.replace(await repo.findAll());
  const keys = new QueueKeys(spec.keyPrefix);
  const replicaAck = new ReplicaAckService(config.queue, redis);
  const queueLists = new RedisQueueLists(redis, keys, replicaAck, createPopConnection(redis, config.redis, replicaAck.enabled));
  const refill = refillParts(config.queue, { lists: queueLists, keys, locks: new LockService(redis), repo, registry }).sweep;
  const lists = registry.all().flatMap((app) => [...app.shards.keys()].map((shard) => keys.list(app.appId, shard)));
  for (let i = 0; i < lists.length; i += 1000) {
    await redis.del(...lists.slice(i, i + 1000));
  }
  const full = await timed(refill);
  const steady = await timed(refill);
  const out: SweepTimes = {
    shards: lists.length,
    fullMs: full.ms,
    fullCpuMs: full.cpuMs,
    full: full.sweep,
    steadyMs: steady.ms,
    steadyCpuMs: steady.cpuMs,
    steady: steady.sweep,
  };
  console.log(JSON.stringify(out));
  redis.disconnect();
  await dataSource.destroy();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
