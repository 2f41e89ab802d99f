/**
 * The physical ceiling of a queue-ID request: bare Fastify + one ioredis client doing exactly the
 * request's work (Java-hash shard, one LPOP, bigint compose) and nothing else — no Nest, no
 * validation beyond what the compose needs, no refill (the bench pre-fills the lists).
 * Env: PORT, REDIS_URL, KEY_PREFIX; BARE_AUTO_PIPELINING=1 turns on ioredis auto-pipelining (the
 * service's client has it on: the commands of one event-loop turn share one write), so the gap to
 * the service can be read with and without that one difference.
 */
import { dirname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { composeQueueId, shardOf } from '../../../src/queue-id/core/queue-id-layout';

// The very Fastify the service runs on (@nestjs/platform-fastify may carry its own copy).
const fastifyPath = require.resolve('fastify', { paths: [dirname(require.resolve('@nestjs/platform-fastify'))] });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Fastify = require(fastifyPath) as (opts: { keepAliveTimeout: number }) => FastifyInstance;

const port = Number(process.env.PORT);
const prefix = `${process.env.KEY_PREFIX ?? 'id.gen.'}idList_`;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', {
  enableAutoPipelining: process.env.BARE_AUTO_PIPELINING === '1',
});
const app = Fastify({ keepAliveTimeout: 65_000 });

app.get<{ Params: { appId: string }; Querystring: { gatePass: string } }>('/api/id/:appId', async (req, reply) => {
  const appId = Number(req.params.appId);
  const shardId = shardOf(req.query.gatePass);
  const index = await redis.lpop(`${prefix}${appId}_${shardId}`);
  if (index === null) {
    return reply.code(503).send({ code: -4, error: 'QUEUE_EMPTY', message: 'empty' });
  }
  return composeQueueId(BigInt(index), shardId, appId).toString();
});

const shutdown = (): void => {
  void app.close().then(() => redis.quit()).then(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
app.listen({ port, host: '127.0.0.1' }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
