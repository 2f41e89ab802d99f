import { Cluster } from 'ioredis';
import { RedisClient } from './redis.tokens';

/**
 * Multi-key operations that work on every topology. Keys of different lists hash to different
 * Cluster slots, so nothing here sends two keys in one command or one pipeline on a Cluster.
 */

/** DEL of many keys: one command standalone, one per key (auto-pipelined) on a Cluster. */
export async function deleteKeys(redis: RedisClient, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) {
    return 0;
  }
  if (redis instanceof Cluster) {
    const counts = await Promise.all(keys.map((key) => redis.del(key)));
    return counts.reduce((a, b) => a + b, 0);
  }
  return redis.del(...keys);
}

/**
 * Keys per pipeline (or per batch of commands on a Cluster) in `lengthsOf`: the replies of one
 * pipeline are parsed in one go, so a pipeline of every list (16,384 for 256 apps) would hold the
 * event loop — and every request waiting on it — for tens of milliseconds.
 */
const LENGTHS_CHUNK = 1000;

/**
 * LLEN of many lists as `[error, length]` pairs, in order: pipelines of LENGTHS_CHUNK keys, one
 * after the other, or per key on a Cluster (LENGTHS_CHUNK at a time).
 */
export async function lengthsOf(redis: RedisClient, keys: readonly string[]): Promise<Array<[Error | null, number]>> {
  const out: Array<[Error | null, number]> = [];
  for (let first = 0; first < keys.length; first += LENGTHS_CHUNK) {
    out.push(...(await lengthsOfChunk(redis, keys.slice(first, first + LENGTHS_CHUNK))));
  }
  return out;
}

async function lengthsOfChunk(redis: RedisClient, keys: readonly string[]): Promise<Array<[Error | null, number]>> {
  if (redis instanceof Cluster) {
    return Promise.all(
      keys.map((key) =>
        redis.llen(key).then(
          (len): [Error | null, number] => [null, len],
          (err: unknown): [Error | null, number] => [err instanceof Error ? err : new Error(String(err)), 0],
        ),
      ),
    );
  }
  const pipeline = redis.pipeline();
  for (const key of keys) {
    pipeline.llen(key);
  }
  const replies = (await pipeline.exec()) ?? [];
  return keys.map((_, i): [Error | null, number] => {
    const [err, len] = replies[i] ?? [new Error('no reply'), 0];
    return [err, Number(len ?? 0)];
  });
}
