import { AppConfig } from '../../../src/config/app-config';
import { loadConfig } from '../../../src/config/load-config';
import { AppRegistry } from '../../../src/queue-id/core/app-registry';
import { decomposeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { LengthReads } from '../../../src/queue-id/core/length-reads';
import { RefillAhead } from '../../../src/queue-id/core/refill-ahead';
import { AppRegistrySync } from '../../../src/queue-id/app-registry-sync.service';
import { QueueIdService } from '../../../src/queue-id/queue-id.service';
import { QueueLocks } from '../../../src/queue-id/queue-locks';
import { RefillMonitor } from '../../../src/queue-id/refill-monitor';
import { RefillParts, refillParts } from '../../support/refill-parts';
import { FakeIdAlloc } from './fake-id-alloc';
import { FakeLocks } from './fake-locks';
import { FakeQueueLists } from './fake-queue-lists';

/** The queue services wired by hand to the in-memory fakes, as QueueIdModule wires them to Redis and MySQL. */
export interface QueueFixture extends Omit<RefillParts, 'reads'> {
  config: AppConfig;
  keys: QueueKeys;
  lists: FakeQueueLists;
  repo: FakeIdAlloc;
  locks: FakeLocks;
  registry: AppRegistry;
  queueConfig: AppRegistrySync;
  service: QueueIdService;
  /** Creates the 64 shard rows of an app (as the admin API does) and reloads the registry. */
  addApp(appId: number, step: number, maxLimitId?: bigint): Promise<void>;
}

/**
 * `env`: settings on top of the unit defaults (the plain model: no refill-ahead, refills of one
 * step), e.g. `{ QUEUE_REFILL_AHEAD: 'true' }`.
 */
export function queueFixture(env: Record<string, string> = {}): QueueFixture {
  const config = loadConfig({
    DATABASE_URL: 'mysql://u:p@127.0.0.1:1/db',
    REDIS_URL: 'redis://127.0.0.1:1',
    KEY_PREFIX: 'unit.',
    SNOWFLAKE_MODE: 'off',
    QUEUE_REFILL_AHEAD: 'false',
    QUEUE_REFILL_MAX_SIZE: '1',
    ...env,
  });
  const keys = new QueueKeys(config.redis.keyPrefix);
  const lists = new FakeQueueLists();
  const repo = new FakeIdAlloc();
  const locks = new FakeLocks();
  const registry = new AppRegistry();
  const ahead = new RefillAhead({
    idleRatio: config.queue.idleRatio,
    targetMs: config.queue.refillTargetMs,
    maxSize: config.queue.refillMaxSize,
  });
  const lengthReads = new LengthReads();
  const monitor = new RefillMonitor();
  const parts = refillParts(config.queue, { lists, keys, locks, repo, registry, monitor, ahead, reads: lengthReads });
  const queueConfig = new AppRegistrySync(config.redis, lists, new QueueLocks(config.queue, keys, locks), repo, registry, lengthReads);
  const service = new QueueIdService(registry, queueConfig, parts.pops, parts.demand, parts.background, lists);
  return {
    ...parts,
    config,
    keys,
    lists,
    repo,
    locks,
    registry,
    queueConfig,
    service,
    addApp: async (appId, step, maxLimitId = 0n) => {
      await repo.createApp({ appId, appName: `app${appId}`, step, maxLimitId, description: null }, 64);
      await queueConfig.reload();
    },
  };
}

/** A gatePass that lands on `shardId`. */
export function gatePassFor(shardId: number): string {
  for (let i = 0; ; i++) {
    if (shardOf(`user${i}`) === shardId) {
      return `user${i}`;
    }
  }
}

/** The index of each queue ID (its shard and app checked). */
export function indexesOf(ids: readonly bigint[], appId: number, shardId: number): bigint[] {
  return ids.map((id) => {
    const parts = decomposeQueueId(id);
    if (parts.appId !== appId || parts.shardId !== shardId) {
      throw new Error(`ID ${id} is of app ${parts.appId} shard ${parts.shardId}, not ${appId}/${shardId}`);
    }
    return parts.index;
  });
}

export { errorKindOf } from '../../support/error-kind';

/** Lets pending promise callbacks run (not timers). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await Promise.resolve();
  }
}

/** from..to as bigints. */
export function span(from: number, to: number): bigint[] {
  const out: bigint[] = [];
  for (let i = from; i <= to; i++) {
    out.push(BigInt(i));
  }
  return out;
}
