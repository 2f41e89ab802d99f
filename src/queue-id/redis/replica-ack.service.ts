import { Inject, Injectable, Logger } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../../config/config-tokens';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { ConnectionEpoch } from '../../infra/redis/connection-epoch';
import { REDIS, RedisClient } from '../../infra/redis/redis.tokens';
import { waitVerdict } from '../core/wait-verdict';

/**
 * Redis failover protection (REDIS_WAIT_REPLICAS): popped indexes are returned only after
 * `WAIT n timeout`, answered on the connection that popped them, confirms that n replicas have
 * the pops. A replica promoted after a failover then cannot hand the same indexes out again.
 * Unconfirmed indexes are dropped (a gap) and the request gets QUEUE_NOT_REPLICATED (503); see
 * core/wait-verdict.ts for what counts as confirmed. Used only by RedisQueueLists: the queue's
 * services see it as QueueLists.popConfirmed / confirmPops (core/queue-lists.ts says why).
 */
@Injectable()
export class ReplicaAckService {
  private readonly logger = new Logger(ReplicaAckService.name);
  private readonly replicas: number;
  private readonly timeoutMs: number;
  private readonly epoch: ConnectionEpoch | null;

  constructor(
    @Inject(QUEUE_CONFIG) queue: QueueConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    this.replicas = queue.waitReplicas;
    this.timeoutMs = queue.waitTimeoutMs;
    // Without WAIT nothing is watched: the request path stays as it is.
    this.epoch = this.replicas > 0 ? new ConnectionEpoch(redis) : null;
  }

  get enabled(): boolean {
    return this.replicas > 0;
  }

  /** The connection epoch now: pass it to `confirm` for pops made after this moment. */
  get epochNow(): number {
    return this.epoch?.value ?? 0;
  }

  /**
   * LPOP of up to n entries (and, with `withLength`, the LLEN after it) and the WAIT confirming
   * it, as one pipeline on one connection (the pop's key routes all to one node in a Cluster). A
   * failed pop throws the Redis error (nothing known to be popped); popped entries that are not
   * confirmed are dropped with QUEUE_NOT_REPLICATED. `length` is -1 when not read or failed.
   */
  async popConfirmed(listKey: string, n: number, withLength = false): Promise<{ entries: Buffer[]; length: number }> {
    const epochBefore = this.epochNow;
    const pipeline = this.redis.pipeline();
    if (n === 1) {
      pipeline.lpopBuffer(listKey);
    } else {
      pipeline.lpopBuffer(listKey, n);
    }
    if (withLength) {
      pipeline.llen(listKey);
    }
    const replies = (await pipeline.wait(this.replicas, this.timeoutMs).exec()) ?? [];
    const [popError, popped] = replies[0] ?? [new Error('no reply to LPOP'), null];
    if (popError) {
      throw popError;
    }
    const entries = popped === null ? [] : Array.isArray(popped) ? (popped as Buffer[]) : [popped as Buffer];
    if (entries.length > 0) {
      this.check(replies[withLength ? 2 : 1], epochBefore);
    }
    const [lengthError, length] = withLength ? (replies[1] ?? [new Error('no reply'), -1]) : [null, -1];
    return { entries, length: lengthError ? -1 : Number(length) };
  }

  /**
   * Throws unless `replicas` replicas acknowledged every write made on the connection that serves
   * `listKey` (the pipeline routes the WAIT to that key's node in a Cluster), and that connection
   * stayed the same since `epochBefore` (taken before the pops this confirms).
   */
  async confirm(listKey: string, epochBefore: number): Promise<void> {
    if (!this.enabled) {
      return;
    }
    let replies: Array<[Error | null, unknown]>;
    try {
      replies = (await this.redis.pipeline().exists(listKey).wait(this.replicas, this.timeoutMs).exec()) ?? [];
    } catch (err) {
      replies = [[null, 0], [err instanceof Error ? err : new Error(String(err)), 0]];
    }
    this.check(replies[1], epochBefore);
  }

  private check(reply: [Error | null, unknown] | undefined, epochBefore: number): void {
    const [error, acks] = reply ?? [new Error('no reply to WAIT'), 0];
    const verdict = waitVerdict(
      { error, acks: Number(acks ?? 0), epochBefore, epochAfter: this.epochNow },
      this.replicas,
      this.timeoutMs,
    );
    if (!verdict.confirmed) {
      this.logger.warn(`WAIT ${this.replicas} ${this.timeoutMs}: ${verdict.reason}; IDs dropped`);
      throw new IdGenError(ErrorKind.QueueNotReplicated, `${verdict.reason}; its IDs were dropped, retry`);
    }
  }
}
