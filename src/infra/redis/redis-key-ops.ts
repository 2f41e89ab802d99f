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
 * Keys per batch in `lengthsOf`: one script of LENGTHS_CHUNK keys on one server (~1.5 µs of Redis
 * time per key, ~1.5 ms per script), one batch of commands on a Cluster. The replies of one batch
 * are parsed in one go, so a batch of every list (16,384 for 256 apps) would hold the event loop
 * for tens of ms.
 */
const LENGTHS_CHUNK = 1000;

/** LLEN of every key, -1 for a key whose LLEN fails (e.g. not a list). */
const LENGTHS_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  local n = redis.pcall('LLEN', KEYS[i])
  if type(n) == 'table' then out[i] = -1 else out[i] = n end
end
return out`;

/**
 * LLEN of many lists as `[error, length]` pairs, in order, LENGTHS_CHUNK keys at a time. On one
 * server one script per chunk: one command instead of one per list (each costs ioredis an object,
 * a promise and its reply: at 16,384 lists, garbage that grew the service's heap by tens of MB per
 * read). A Cluster cannot run one script over keys of different slots: one LLEN per key there.
 */
export async function lengthsOf(redis: RedisClient, keys: readonly string[]): Promise<Array<[Error | null, number]>> {
  const out: Array<[Error | null, number]> = [];
  await forEachLength(redis, keys, (_, length) => out.push(length instanceof Error ? [length, 0] : [null, length]));
  return out;
}

/**
 * lengthsOf without the pairs: `each(i, length)` for keys[i] as its chunk's reply arrives (an
 * Error where its LLEN failed), so a caller can write the lengths where it keeps them.
 */
export async function forEachLength(redis: RedisClient, keys: readonly string[], each: (i: number, length: number | Error) => void): Promise<void> {
  for (let first = 0; first < keys.length; first += LENGTHS_CHUNK) {
    const chunk = keys.slice(first, first + LENGTHS_CHUNK);
    if (redis instanceof Cluster) {
      (await clusterLengths(redis, chunk)).forEach(([err, length], i) => each(first + i, err ?? length));
      continue;
    }
    const replies = (await redis.eval(LENGTHS_SCRIPT, chunk.length, ...chunk)) as unknown[];
    for (let i = 0; i < chunk.length; i++) {
      const n = replies[i];
      each(first + i, typeof n === 'number' && n >= 0 ? n : new Error(`LLEN ${chunk[i]} failed`));
    }
  }
}

function clusterLengths(redis: Cluster, keys: readonly string[]): Promise<Array<[Error | null, number]>> {
  return Promise.all(
    keys.map((key) =>
      redis.llen(key).then(
        (len): [Error | null, number] => [null, len],
        (err: unknown): [Error | null, number] => [err instanceof Error ? err : new Error(String(err)), 0],
      ),
    ),
  );
}
