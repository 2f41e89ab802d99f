import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';

/**
 * Redis failover protection (REDIS_WAIT_REPLICAS): popped indexes are returned only after
 * `WAIT n timeout` confirms that this connection's writes (the pops) reached n replicas. A
 * replica promoted after a failover then cannot hand the same indexes out again. Unconfirmed
 * indexes are dropped (a gap) and the request gets QUEUE_NOT_REPLICATED (503).
 */
@Injectable()
export class ReplicaAckService {
  private readonly logger = new Logger(ReplicaAckService.name);
  private readonly replicas: number;
  private readonly timeoutMs: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    this.replicas = config.queue.waitReplicas;
    this.timeoutMs = config.queue.waitTimeoutMs;
  }

  get enabled(): boolean {
    return this.replicas > 0;
  }

  /**
   * Throws unless `replicas` replicas acknowledged every write made so far on the connection that
   * serves `listKey` (the pipeline routes the WAIT to that key's node in a Cluster).
   */
  async confirm(listKey: string): Promise<void> {
    if (!this.enabled) {
      return;
    }
    const replies = (await this.redis.pipeline().exists(listKey).wait(this.replicas, this.timeoutMs).exec()) ?? [];
    const [err, acks] = replies[1] ?? [new Error('no reply to WAIT'), 0];
    if (err) {
      throw err;
    }
    if (Number(acks) < this.replicas) {
      this.logger.warn(`WAIT ${this.replicas} ${this.timeoutMs}: only ${String(acks)} replicas confirmed; IDs dropped`);
      throw new IdGenError(
        ErrorKind.QueueNotReplicated,
        `only ${String(acks)} of ${this.replicas} Redis replicas confirmed the pop in ${this.timeoutMs} ms; its IDs were dropped, retry`,
      );
    }
  }
}
