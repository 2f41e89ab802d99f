import { Logger } from '@nestjs/common';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import { RedisConfig, RedisTopology, RedisUrlParts, redisUrlParts } from '../../config/redis-config';
import { boundCommands } from './command-deadlines';
import { isDemotionReply } from './demotion-replies';
import { RedisClient } from './redis.tokens';
import { rejectUnansweredOnClose } from './unanswered-commands';

/** TCP keepalive probes start after this long idle on every Redis connection (the batch pop's too). */
export const REDIS_KEEPALIVE_MS = 10_000;

/**
 * User, password, TLS and db of REDIS_URL for a Sentinel client or a Cluster's node connections
 * (a Cluster has no db). A standalone client reads REDIS_URL itself (`new Redis(url, …)`).
 */
function redisUrlOptions(url: string, kind: Exclude<RedisTopology['kind'], 'standalone'>): Pick<RedisOptions, 'username' | 'password' | 'db' | 'tls'> {
  const { username, password, db, tls } = redisUrlParts(url);
  return { username, password, tls: tls ? {} : undefined, ...(kind === 'sentinel' ? { db } : {}) };
}

/** What differs per use on top of the connection options: the Sentinel's and the Cluster's own. */
export interface TopologyOptions {
  sentinel?: RedisOptions;
  cluster?: Omit<ClusterOptions, 'redisOptions'>;
}

/**
 * An ioredis client of the configured topology (standalone, Sentinel or Cluster) with `connection`
 * on every server connection and REDIS_URL's credentials: the one mapping from the configuration
 * to a client, for the service's client and the start's check (backend-start-check.ts).
 */
export function redisClientOf(config: RedisConfig, connection: RedisOptions, own: TopologyOptions = {}): Redis | Cluster {
  const topology = config.topology;
  switch (topology.kind) {
    case 'standalone':
      return new Redis(config.url, connection);
    case 'sentinel':
      return new Redis({
        ...connection,
        ...redisUrlOptions(config.url, 'sentinel'),
        sentinels: topology.sentinels,
        name: topology.name,
        ...own.sentinel,
      });
    case 'cluster':
      return new Cluster(topology.nodes, { ...own.cluster, redisOptions: { ...connection, ...redisUrlOptions(config.url, 'cluster') } });
  }
}

/**
 * Commands fail fast while Redis is away instead of queueing for ever, and a command sent before a
 * connection dropped is never sent again after the reconnect (it may have run: a second RPUSH
 * would queue indexes twice, a second WAIT would measure another server); see
 * unanswered-commands.ts. Commands not yet sent (the offline queue) still go out after it, unless
 * their deadline passed meanwhile (command-deadlines.ts: then they fail and are never sent). A
 * reply saying the node was demoted drops the connection and connects again (demotion-replies.ts:
 * `1` = reconnect without resending the command).
 */
const FAIL_FAST: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectTimeout: 3000,
  keepAlive: REDIS_KEEPALIVE_MS,
  retryStrategy: (times) => Math.min(times * 100, 2000),
  autoResendUnfulfilledCommands: false,
  reconnectOnError: (err) => (isDemotionReply(err.message) ? 1 : false),
};

/**
 * Commands issued in one event-loop turn go out in one write (ioredis auto-pipelining, as on a
 * Cluster): under load the single gets of a turn share one `write` system call instead of one
 * each: 4–5 µs less kernel CPU per request on loopback, 1–5 µs of it paid back in garbage
 * collection of the pipelines (docs/performance.md "Queue single get: Redis writes batched").
 * Each command is still sent once, with its own reply and error; explicit pipelines (the pops
 * with their WAIT, the refill's pre-encoded RPUSHes) are written at once, in their order.
 */
export const BATCHED_WRITES: RedisOptions = { ...FAIL_FAST, enableAutoPipelining: true };

/** One ioredis client for the configured topology; errors are logged once per change. */
export function createRedisClient(config: RedisConfig): RedisClient {
  // A Cluster's node connections fail fast without auto-pipelining of their own: the Cluster
  // groups the commands per node.
  const client = redisClientOf(config, config.topology.kind === 'cluster' ? FAIL_FAST : BATCHED_WRITES, {
    // The sentinels' own connections (asking where the master is) are bounded too.
    sentinel: { sentinelCommandTimeout: config.commandTimeoutMs },
    cluster: {
      // Requests for keys on several masters are grouped per node (queue-length sweeps).
      enableAutoPipelining: true,
      clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
      // A command failing with "Connection is closed." is otherwise sent again to another node
      // (single commands and whole pipelines) although the lost node may have run it.
      retryDelayOnFailover: 0,
    },
  });
  rejectUnansweredOnClose(client);
  boundCommands(client, config.commandTimeoutMs);
  logErrorChanges(client);
  return client;
}

function logErrorChanges(client: RedisClient): void {
  const logger = new Logger('Redis');
  let lastError = '';
  client.on('error', (err: Error) => {
    // ioredis repeats the same error on every reconnect attempt: log changes only.
    if (err.message !== lastError) {
      lastError = err.message;
      logger.warn(`redis error: ${err.message}`);
    }
  });
  client.on('ready', () => {
    lastError = '';
  });
}

/**
 * Where and as whom a standalone client connects, as ioredis resolved it from REDIS_URL (query
 * parameters such as `?db=3` or `?password=` included): a second connection to the same server
 * (the batch pops') must use the same database and credentials, never its own reading of the URL.
 */
export function standaloneEndpoint(client: RedisClient): RedisUrlParts {
  if (client instanceof Cluster) {
    throw new Error('standaloneEndpoint: a Cluster client has no single endpoint');
  }
  const o = client.options;
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 6379,
    tls: o.tls !== undefined && o.tls !== null && (o.tls as unknown) !== false,
    username: o.username || undefined,
    password: o.password || undefined,
    db: o.db ?? 0,
  };
}
