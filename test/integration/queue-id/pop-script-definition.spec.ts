import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { loadConfig } from '../../../src/config/load-config';
import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import { createPopConnection } from '../../../src/queue-id/redis/pop-connection';
import { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';
import { TEST_REDIS_URL, deleteByPrefix } from '../../support/test-env';

/**
 * With auto-pipelining ioredis copied a client's custom commands into a pipeline when it created
 * it: a script defined on its first call was missing from a pipeline already being filled in that
 * turn (ioredis then threw inside and left the pipeline's other commands unanswered). The scripts
 * are plain EVALSHA commands now (infra/redis/lua-script.ts): this keeps that case covered.
 */
describe('the queue lists on an auto-pipelining client', () => {
  it("runs the lists' scripts first called in a turn whose pipeline is already being filled", async () => {
    // A fresh client that pipelines the commands of a turn, as the service's clients do.
    const fresh = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
    const prefix = `test.${randomUUID()}.id.gen.`;
    const config = loadConfig({ REDIS_URL: TEST_REDIS_URL, SNOWFLAKE_MODE: 'off' });
    const replicaAck = new ReplicaAckService(config.queue, fresh);
    const lists = new RedisQueueLists(fresh, new QueueKeys(prefix), replicaAck, createPopConnection(fresh, config.redis, replicaAck.enabled));
    try {
      await fresh.rpush(`${prefix}idList_1_2`, '10', '11', '12');
      // The plain pop opens this turn's pipeline; the script's first call (raise-marker.ts) joins it.
      const plain = lists.pop(1, 2, 1);
      const scripted = lists.raiseMarker(1, 2, 500n);
      expect((await plain).map((b) => Buffer.from(b).toString())).toEqual(['10']);
      await scripted;
      expect(await lists.pushMark(1, 2)).toBe('500');
      expect(await lists.length(1, 2)).toBe(2);
    } finally {
      await lists.onApplicationShutdown();
      await deleteByPrefix(fresh, prefix);
      await fresh.quit();
    }
  });
});
