import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { createRedisClient } from '../../../src/infra/redis/redis-client.factory';
import { RedisClient } from '../../../src/infra/redis/redis.tokens';
import { TEST_REDIS_URL } from '../../support/test-env';

/** Counts the socket writes of a client's connection (standalone: one socket). */
function countWrites(client: RedisClient): { writes: () => number } {
  const stream = (client as unknown as { stream: Socket }).stream;
  let writes = 0;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((...args: unknown[]) => {
    writes++;
    return write(...args);
  });
  return { writes: () => writes };
}

describe('the standalone Redis client batches the commands of one event-loop turn', () => {
  let client: RedisClient;
  const key = `test.${randomUUID()}.batched`;

  beforeAll(async () => {
    client = createRedisClient({ url: TEST_REDIS_URL, keyPrefix: '', commandTimeoutMs: 500, topology: { kind: 'standalone' } });
    await client.ping();
    await client.rpush(key, '1', '2', '3', '4', '5', '6', '7', '8');
  });

  afterAll(async () => {
    await client.del(key);
    await client.quit();
  });

  it('sends the single pops of one turn in one write, each with its own reply, each entry once', async () => {
    const counter = countWrites(client);
    const pops = [1, 2, 3, 4, 5].map(() => client.lpopBuffer(key));
    const replies = await Promise.all(pops);
    expect(counter.writes()).toBe(1);
    expect(replies.map((b) => b?.toString())).toEqual(['1', '2', '3', '4', '5']);
    expect(await client.lrange(key, 0, -1)).toEqual(['6', '7', '8']);
  });

  it('fails only the command that failed', async () => {
    const bad = client.incr(key);
    const good = client.lpopBuffer(key);
    await expect(bad).rejects.toThrow(/WRONGTYPE/);
    expect((await good)?.toString()).toBe('6');
  });
});
