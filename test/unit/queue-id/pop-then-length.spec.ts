import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { RedisQueueLists } from '../../../src/queue-id/redis/redis-queue-lists';
import type { RedisClient } from '../../../src/infra/redis/redis.tokens';
import type { ReplicaAckService } from '../../../src/queue-id/redis/replica-ack.service';

/**
 * `popThenLength` through a client (Sentinel, Cluster): the pop and the `LLEN` are sent together;
 * an `LLEN` that fails, by rejecting or by throwing (a client method may throw instead of
 * rejecting: ioredis' Cluster pipelining with no node for a slot does, though the pop before it,
 * on the same key, would throw first), leaves the length unknown, and the pop's own outcome is
 * what the caller gets. A safeguard: no path is known that sends the pop and then throws.
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

  it("rejects with the pop's error (handled, not left floating) when the LLEN throws too", async () => {
    const pop = Promise.reject(new Error('connection lost'));
    const handled = jest.spyOn(pop, 'catch');
    const lists = listsWith({
      lpopBuffer: () => pop,
      llen: () => {
        throw new Error('no node for the slot');
      },
    });
    await expect(lists.popThenLength(1, 0, 1)).rejects.toThrow('connection lost');
    expect(handled).toHaveBeenCalled();
  });
});
