import { Cluster, Redis } from 'ioredis';
import { RedisClient } from './redis.tokens';

/** Calls `fn` for the client's connection, or for each node connection of a Cluster, now and later. */
export function forEachConnection(client: RedisClient, fn: (redis: Redis) => void): void {
  if (!(client instanceof Cluster)) {
    fn(client);
    return;
  }
  const seen = new WeakSet<Redis>();
  const once = (redis: Redis): void => {
    if (!seen.has(redis)) {
      seen.add(redis);
      fn(redis);
    }
  };
  client.nodes('all').forEach(once);
  client.on('+node', once);
}
