import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { REDIS } from '../infra/redis/redis.tokens';
import { AppRegistry, ShardConfig } from './core/app-registry';
import { QueueKeys } from './core/queue-keys';
import { composeQueueId, shardOf } from './core/queue-id-layout';
import { RETRY_TIME } from './core/refill-policy';
import { QueueConfigService } from './queue-config.service';
import { QueueRefillService } from './queue-refill.service';

const DIGITS = /^[0-9]{1,16}$/;

/** How many times an on-demand refill waits (50 ms each) for another instance's refill lock. */
const LOCK_WAIT_RETRIES = 40;

/**
 * The request path of seed 001: gatePass → shard, LPOP (with a count for batches), on an empty
 * list refill that shard now and retry at most RETRY_TIME times.
 */
@Injectable()
export class QueueIdService {
  private readonly logger = new Logger(QueueIdService.name);
  private readonly keys: QueueKeys;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly registry: AppRegistry,
    private readonly configService: QueueConfigService,
    private readonly refill: QueueRefillService,
  ) {
    this.keys = new QueueKeys(config.redis.keyPrefix);
  }

  /** `count` IDs for (appId, gatePass), all from the gatePass's shard. */
  async get(appId: number, gatePass: string, count: number): Promise<bigint[]> {
    const shardId = shardOf(gatePass);
    const shard = await this.resolveShard(appId, shardId);
    const indexes = await this.popIndexes(appId, shardId, shard, count);
    return indexes.map((index) => composeQueueId(index, shardId, appId));
  }

  private async resolveShard(appId: number, shardId: number): Promise<ShardConfig> {
    let app = this.registry.get(appId);
    if (!app || !this.registry.isLoaded) {
      await this.guardBackend(() => this.configService.reloadOnMiss());
      app = this.registry.get(appId);
    }
    if (!this.registry.isLoaded) {
      throw new IdGenError(ErrorKind.QueueNotInitialised, 'the queue ID generator has not loaded id_alloc yet');
    }
    if (!app) {
      throw new IdGenError(ErrorKind.QueueAppNotFound, `appId ${appId} is not configured`);
    }
    const shard = app.shards.get(shardId);
    if (!shard) {
      throw new IdGenError(ErrorKind.QueueShardNotFound, `appId ${appId} has no shard ${shardId}`);
    }
    return shard;
  }

  private async popIndexes(appId: number, shardId: number, shard: ShardConfig, count: number): Promise<bigint[]> {
    const key = this.keys.list(appId, shardId);
    const out: bigint[] = [];
    let exhausted = false;
    let refillsLeft = RETRY_TIME;
    for (;;) {
      const popped = await this.guardBackend(() => this.pop(key, count - out.length));
      for (const raw of popped) {
        if (!DIGITS.test(raw)) {
          this.logger.warn(`dropped a malformed entry from ${key}`);
          continue;
        }
        const index = BigInt(raw);
        // Entries queued before max_limit_id was lowered are dropped, never returned.
        if (index > shard.maxIndex) {
          exhausted = true;
          continue;
        }
        out.push(index);
      }
      if (out.length === count) {
        return out;
      }
      if (refillsLeft === 0 || exhausted) {
        break;
      }
      refillsLeft--;
      const missing = count - out.length;
      const result = await this.guardBackend(() =>
        this.refill.refillShard(appId, shardId, {
          skipIfAtLeast: missing,
          minWanted: missing,
          lockRetries: LOCK_WAIT_RETRIES,
        }),
      );
      if (result.status === 'missing') {
        throw new IdGenError(ErrorKind.QueueShardNotFound, `appId ${appId} has no shard ${shardId} any more`);
      }
      // Exhausted: another instance may still have pushed the last indexes, so pop once more.
      exhausted = result.status === 'exhausted';
    }
    // Popped entries not returned are gaps, never handed out again.
    if (exhausted) {
      throw new IdGenError(
        ErrorKind.QueueExhausted,
        `appId ${appId} shard ${shardId} has used up its ID space (max_limit_id); raise max_limit_id to continue`,
      );
    }
    throw new IdGenError(ErrorKind.QueueEmpty, `the queue of appId ${appId} shard ${shardId} is empty; retry later`);
  }

  private async pop(key: string, n: number): Promise<string[]> {
    if (n === 1) {
      const v = await this.redis.lpop(key);
      return v === null ? [] : [v];
    }
    return (await this.redis.lpop(key, n)) ?? [];
  }

  /** Redis or MySQL failing under a request is a 503, not a 500. */
  private async guardBackend<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof IdGenError) {
        throw err;
      }
      this.logger.warn(`backend failure: ${(err as Error).message}`);
      throw new IdGenError(ErrorKind.BackendUnavailable, 'a backend (Redis or MySQL) is unavailable; retry later');
    }
  }
}
