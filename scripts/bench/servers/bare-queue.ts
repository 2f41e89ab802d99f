/**
 * The ceiling of a queue-ID request: bare Fastify + ioredis doing exactly the request's work
 * (Java-hash shard, one LPOP, bigint compose) and keeping its lists filled, nothing else: no Nest,
 * no logger, no request id, no metrics, no validation beyond what the compose needs.
 *
 * - The pop client has the service's options (`BATCHED_WRITES` of redis-client.factory.ts:
 *   auto-pipelining, the fail-fast settings): the commands of one event-loop turn share one write,
 *   as in the service. `BARE_AUTO_PIPELINING=0` turns auto-pipelining off (for a comparison only).
 * - Refill on a connection of its own, without auto-pipelining: ioredis overflows its stack on a
 *   100,000-argument command inside an auto-pipeline, and the refill's write must not wait in the
 *   pops' pipeline. The lists are the ceiling's own (`<KEY_PREFIX>bare_<appId>_<shard>`, popped
 *   by this process only), so it knows their lengths without asking: each of the 64 lists of the
 *   apps in BARE_APPS (default `1`) is filled with two steps (BARE_STEP, default 10,000 indexes)
 *   before it listens, and one step is pushed whenever a pop leaves a list below one step;
 *   `POST /top-up?min=N` fills every list to at least N first (the bench, before each run).
 *
 * - `BARE_POP=raw`: the pops go over the service's own pop connection instead (src's PopConnection:
 *   `LPOP key 1` as RESP bytes, the reply read into an index) and the ID is written as the service
 *   writes it (queueIdString): the ceiling of the service's single get since it pops that way
 *   (2026-11-27), the strongest one with the client the service uses.
 *
 * - `BARE_WITH_SERVICE=/path/dist/src`: the whole service is also started in this process first,
 *   idle beside the bare route: the ceiling in a process as heavy as the service's (the libraries
 *   it loads, the objects its start makes), for `concurrent-pairs.ts`. Its settings:
 *   `BARE_SERVICE_ENV` (JSON, DATABASE_URL required) over the bench service's (lib/service.ts:
 *   local snowflake worker 1, its own cache folder) and a port of its own on 127.0.0.1, its keys
 *   under `<KEY_PREFIX>embedded.`. `BARE_SERVICE_LOAD_ONLY=1`: its modules are only loaded
 *   (every library required), nothing started.
 *
 * Env: PORT, REDIS_URL, KEY_PREFIX, BARE_APPS, BARE_STEP, BARE_AUTO_PIPELINING, BARE_POP,
 * BARE_WITH_SERVICE, BARE_SERVICE_ENV, BARE_SERVICE_LOAD_ONLY.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { redisUrlParts } from '../../../src/config/redis-config';
import { BATCHED_WRITES } from '../../../src/infra/redis/redis-client.factory';
import { queueIdString } from '../../../src/queue-id/core/queue-batch';
import { MAX_INDEX, SHARD_COUNT, composeQueueId, lowNumber, shardOf } from '../../../src/queue-id/core/queue-id-layout';
import { PopConnection } from '../../../src/queue-id/redis/pop-connection';
import { lpopRequest } from '../../../src/queue-id/redis/resp/resp-encode';

// The very Fastify the service runs on (@nestjs/platform-fastify may carry its own copy).
const fastifyPath = require.resolve('fastify', { paths: [dirname(require.resolve('@nestjs/platform-fastify'))] });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Fastify = require(fastifyPath) as (opts: { keepAliveTimeout: number }) => FastifyInstance;

const port = Number(process.env.PORT);
const prefix = `${process.env.KEY_PREFIX ?? 'id.gen.'}bare_`;
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const step = Number(process.env.BARE_STEP ?? 10_000);
const apps = (process.env.BARE_APPS ?? '1').split(',').map(Number);
const redis = new Redis(url, { ...BATCHED_WRITES, enableAutoPipelining: process.env.BARE_AUTO_PIPELINING !== '0' });
const refillRedis = new Redis(url, { ...BATCHED_WRITES, enableAutoPipelining: false });

/** A list of this process: entries in it (only this process pops it), next index to push, a push under way. */
interface List {
  length: number;
  next: number;
  refilling: boolean;
}
const lists = new Map<string, List>();

/** Pushes one step of consecutive indexes onto the list (one RPUSH of `step` values, on the refill connection). */
async function refill(key: string, list: List): Promise<void> {
  list.refilling = true;
  const args = new Array<string>(step + 1);
  args[0] = key;
  for (let i = 0; i < step; i++) {
    args[i + 1] = String(list.next + i);
  }
  list.next += step;
  try {
    await refillRedis.call('RPUSH', args);
    list.length += step;
  } finally {
    list.refilling = false;
  }
}

async function prefill(): Promise<void> {
  for (const appId of apps) {
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const key = `${prefix}${appId}_${shard}`;
      const list: List = { length: 0, next: 0, refilling: false };
      lists.set(key, list);
      await refillRedis.del(key);
      await refill(key, list);
      await refill(key, list);
    }
  }
}

const app = Fastify({ keepAliveTimeout: 65_000 });

/**
 * `POST /top-up?min=N`: every list refilled (one step at a time) until it holds at least N. The
 * bench calls it before each measured run, as it tops up the service's lists, so that the runs
 * measure pops, not this server's refills (one RPUSH of 10,000 values encoded by ioredis costs
 * milliseconds, all of them inside the run that happens to need it).
 */
app.post<{ Querystring: { min: string } }>('/top-up', async (req) => {
  const min = Number(req.query.min);
  for (const [key, list] of lists) {
    while (list.length < min) {
      if (list.refilling) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      } else {
        await refill(key, list);
      }
    }
  }
  return 'ok';
});

/** After a pop of `key`: one step pushed when the list fell below one step (no push under way). */
function popped(key: string): void {
  const list = lists.get(key);
  if (list !== undefined && --list.length < step && !list.refilling) {
    refill(key, list).catch((err: unknown) => console.error(err));
  }
}

if (process.env.BARE_POP === 'raw') {
  const pop = new PopConnection(redisUrlParts(url), 1000);
  // Each list's `LPOP key 1` built once, as the service does (redis-queue-lists.ts).
  const requests = new Array<string>(256 * SHARD_COUNT).fill('');
  app.get<{ Params: { appId: string }; Querystring: { gatePass: string } }>('/api/id/:appId', async (req, reply) => {
    const appId = Number(req.params.appId);
    const shardId = shardOf(req.query.gatePass);
    const key = `${prefix}${appId}_${shardId}`;
    const slot = appId * SHARD_COUNT + shardId;
    const request = requests[slot] !== '' ? requests[slot] : (requests[slot] = lpopRequest(key, 1, false));
    const { indexes } = await pop.popWith(request, 1, MAX_INDEX, false);
    if (indexes.length === 0) {
      return reply.code(503).send({ code: -4, error: 'QUEUE_EMPTY', message: 'empty' });
    }
    popped(key);
    return queueIdString(indexes[0], lowNumber(appId, shardId), shardId, appId);
  });
} else {

  app.get<{ Params: { appId: string }; Querystring: { gatePass: string } }>('/api/id/:appId', async (req, reply) => {
    const appId = Number(req.params.appId);
    const shardId = shardOf(req.query.gatePass);
    const key = `${prefix}${appId}_${shardId}`;
    const index = await redis.lpop(key);
    if (index === null) {
      return reply.code(503).send({ code: -4, error: 'QUEUE_EMPTY', message: 'empty' });
    }
    popped(key);
    return composeQueueId(BigInt(index), shardId, appId).toString();
  });
}

/** The service started here (`BARE_WITH_SERVICE`), closed first at shutdown. */
let embedded: { close(): Promise<void> } | undefined;

const shutdown = (): void => {
  void Promise.resolve(embedded?.close())
    .then(() => app.close())
    .then(() => Promise.all([redis.quit(), refillRedis.quit()]))
    .then(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
/** The service started in this process (`BARE_WITH_SERVICE`), before the bare route listens. */
async function startServiceHere(): Promise<void> {
  const dist = process.env.BARE_WITH_SERVICE;
  if (!dist) {
    return;
  }
  /* eslint-disable @typescript-eslint/no-require-imports */
  require('reflect-metadata');
  const { loadConfigOrExit } = require(`${dist}/config/load-config-or-exit`) as typeof import('../../../src/config/load-config-or-exit');
  const { startService } = require(`${dist}/start-service`) as typeof import('../../../src/start-service');
  /* eslint-enable @typescript-eslint/no-require-imports */
  if (process.env.BARE_SERVICE_LOAD_ONLY === '1') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(`${dist}/app.module`);
    return;
  }
  const own = JSON.parse(process.env.BARE_SERVICE_ENV ?? '{}') as Record<string, string>;
  if (!own.DATABASE_URL) {
    throw new Error('BARE_WITH_SERVICE needs DATABASE_URL in BARE_SERVICE_ENV (a database of its own)');
  }
  const cacheDir = mkdtempSync(join(tmpdir(), 'shardleaf-bare-embedded-'));
  process.once('exit', () => rmSync(cacheDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    KEY_PREFIX: `${process.env.KEY_PREFIX ?? 'id.gen.'}embedded.`,
    LOG_LEVEL: 'warn',
    SNOWFLAKE_MODE: 'local',
    SNOWFLAKE_WORKER_ID: '1',
    SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    SNOWFLAKE_CACHE_DIR: cacheDir,
    ...own,
  };
  embedded = await startService(loadConfigOrExit(env));
}

startServiceHere()
  .then(prefill)
  .then(() => app.listen({ port, host: '127.0.0.1' }))
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
