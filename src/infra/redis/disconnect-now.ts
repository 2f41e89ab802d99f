import { RedisClient } from './redis.tokens';

/**
 * Drops the client's connections at once, unless the client is already closed for good (status
 * 'end': quit, a refused connection without retries, an earlier disconnect). On such a client
 * ioredis's disconnect() would still arm its 2 s timer to destroy a socket that is already gone,
 * and that timer keeps the process alive.
 */
export function disconnectNow(client: RedisClient): void {
  if (client.status !== 'end') {
    client.disconnect();
  }
}
