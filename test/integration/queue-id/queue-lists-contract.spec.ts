import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { loadConfig } from '../../../src/config/load-config';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import { createPopConnection } from '../../../src/queue-id/redis/pop-connection';
import { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';
import { TEST_REDIS_URL, deleteByPrefix } from '../../support/test-env';
import { queueListsContract } from '../../unit/queue-id/queue-lists-contract';

/** RedisQueueLists keeps the QueueLists contract the unit tests' in-memory fake is held to. */
describe('RedisQueueLists (QueueLists on a real Redis)', () => {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  const config = loadConfig({ REDIS_URL: TEST_REDIS_URL, SNOWFLAKE_MODE: 'off' });
  const replicaAck = new ReplicaAckService(config.queue, redis);
  const prefixes: string[] = [];
  const made: RedisQueueLists[] = [];

  afterAll(async () => {
    for (const prefix of prefixes) {
      await deleteByPrefix(redis, prefix);
    }
    // Each one's pop connection (opened by the first popIndexes).
    await Promise.all(made.map((lists) => lists.onApplicationShutdown()));
    redis.disconnect();
  });

  queueListsContract(() => {
    const prefix = `test.${randomBytes(4).toString('hex')}.id.gen.`;
    prefixes.push(prefix);
    const keys = new QueueKeys(prefix);
    const lists = new RedisQueueLists(redis, keys, replicaAck, createPopConnection(redis, config.redis, replicaAck.enabled));
    made.push(lists);
    return {
      lists,
      setMarker: async (appId: number, shardId: number, raw: string) => {
        await redis.set(keys.pushMark(appId, shardId), raw);
      },
    };
  });
});
