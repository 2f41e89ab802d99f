import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import type { RedisClient } from '../../../src/infra/redis/redis.tokens';
import type { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';

/**
 * `popThenLength` through a client (Sentinel, Cluster): the pop and the `LLEN` are sent together;
 * an `LLEN` that fails, by rejecting or by throwing (ioredis' Cluster pipelining with no node for
 * a slot throws), leaves the length unknown, and the pop's own outcome is what the caller gets.
 */
describe('RedisQueueLists.popThenLength', () => {
  const keys = new QueueKeys('t.');
  const replicaAck = { enabled: false } as unknown as ReplicaAckService;
  const listsWith = (client: Partial<Record<'lpopBuffer' | 'llen', (...args: unknown[]) => unknown>>): RedisQueueLists =>
    new RedisQueueLists(client as unknown as RedisClient, keys, replicaAck, null);

  it('gives the entries and the length read after them', async () => {
    const sent: string[] = [];
    const lists = listsWith({
      lpopBuffer: (key, n) => (sent.push(`LPOP ${String(key)} ${String(n)}`), Promise.resolve([Buffer.from('7'), Buffer.from('8')])),
      llen: (key) => (sent.push(`LLEN ${String(key)}`), Promise.resolve(40)),
    });
    const popped = await lists.popThenLength(3, 5, 2);
    expect(popped.entries.map(String)).toEqual(['7', '8']);
    expect(popped.length).toBe(40);
    expect(sent).toEqual([`LPOP ${keys.list(3, 5)} 2`, `LLEN ${keys.list(3, 5)}`]);
  });

  it('leaves the length -1 when the LLEN rejects or throws', async () => {
    const rejecting = listsWith({
      lpopBuffer: () => Promise.resolve([Buffer.from('9')]),
      llen: () => Promise.reject(new Error('LLEN refused')),
    });
    await expect(rejecting.popThenLength(1, 0, 1)).resolves.toEqual({ entries: [Buffer.from('9')], length: -1 });
    const throwing = listsWith({
      lpopBuffer: () => Promise.resolve([Buffer.from('9')]),
      llen: () => {
        throw new Error('no node for the slot');
      },
    });
    await expect(throwing.popThenLength(1, 0, 1)).resolves.toEqual({ entries: [Buffer.from('9')], length: -1 });
  });

  it("rejects with the pop's error, never leaving it unhandled, when the LLEN throws too", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const lists = listsWith({
        lpopBuffer: () => Promise.reject(new Error('connection lost')),
        llen: () => {
          throw new Error('no node for the slot');
        },
      });
      await expect(lists.popThenLength(1, 0, 1)).rejects.toThrow('connection lost');
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
