import { ConnectionEpoch } from '../../infra/redis/connection-epoch';
import { RedisClient } from '../../infra/redis/redis.tokens';
import { ClaimRequest, LeaseClaim, LeaseHolder, RenewOutcome, WorkerLeaseStore } from '../core/worker-lease-store';
import { LeaseCommand, runLeaseCommand } from './redis-lease-scripts';

export interface RedisLeaseStoreOptions {
  /**
   * How far the clock of a Redis server that takes the hash over (a promoted replica) may be
   * behind the previous one's: a new epoch forgets leases expiring within this much of its now.
   */
  serverSkewMs: number;
  /**
   * How long a new epoch (the hash written by another server process, or new) leases no id: the
   * TTL plus how far the instances' clocks may differ, so that every holder from before has
   * stopped, and its IDs are older than a new holder's by the new holder's clock.
   */
  epochWaitMs: number;
  /** REDIS_WAIT_REPLICAS: replicas that must confirm a claim or renewal (WAIT) before it counts; 0 = off. */
  waitReplicas: number;
  /** REDIS_WAIT_TIMEOUT_MS. */
  waitTimeoutMs: number;
}

/**
 * The redis registry's leases in ONE hash (redis-lease-scripts.ts: fields, epochs). With
 * REDIS_WAIT_REPLICAS, a claim or renewal counts as confirmed only when a WAIT sent after its
 * reply, on the same connection (no loss of it in between), is acknowledged by that many
 * replicas: a replica promoted later then has it.
 */
export class RedisWorkerLeaseStore implements WorkerLeaseStore {
  private readonly epoch: ConnectionEpoch | null;

  constructor(
    private readonly redis: RedisClient,
    /** The hash of this SNOWFLAKE_NAME: `{KEY_PREFIX}snowflake:{name}:leases`. */
    readonly key: string,
    private readonly options: RedisLeaseStoreOptions,
  ) {
    this.epoch = options.waitReplicas > 0 ? new ConnectionEpoch(redis) : null;
  }

  get description(): string {
    return `hash ${this.key}`;
  }

  async claim(r: ClaimRequest): Promise<LeaseClaim> {
    const { reply, confirmed } = await this.run('shardleafLeaseClaim', [
      r.owner,
      String(r.ttlMs),
      String(r.maxWorkerId),
      String(r.now),
      String(r.allowanceMs),
      r.identity,
      String(this.options.serverSkewMs),
      String(this.options.epochWaitMs),
    ]);
    const fields = reply as Array<number | string>;
    switch (Number(fields[0])) {
      case 1:
        return { kind: 'claimed', workerId: Number(fields[1]), floor: Number(fields[2]), confirmed };
      case 2:
        return { kind: 'ahead', floor: Number(fields[1]) };
      case 3:
        return { kind: 'wait', waitMs: Number(fields[1]) };
      default:
        return { kind: 'none-free' };
    }
  }

  async renew(workerId: number, owner: string, ttlMs: number, until: number): Promise<RenewOutcome> {
    const { reply, confirmed } = await this.run('shardleafLeaseRenew', [
      String(workerId),
      owner,
      String(ttlMs),
      String(until),
      String(this.options.serverSkewMs),
      String(this.options.epochWaitMs),
    ]);
    if (Number(reply) !== 1) {
      return 'lost';
    }
    return confirmed ? 'renewed' : 'unconfirmed';
  }

  async release(workerId: number, owner: string, maxTimestamp: number): Promise<boolean> {
    const { reply } = await this.run('shardleafLeaseRelease', [String(workerId), owner, String(maxTimestamp)]);
    return Number(reply) === 1;
  }

  async holders(since: number): Promise<LeaseHolder[]> {
    const fields = await this.redis.hgetall(this.key);
    const holders: LeaseHolder[] = [];
    for (const [field, identity] of Object.entries(fields)) {
      const m = /^a:([0-9]+)$/.exec(field);
      const recordedUntil = m ? Number(fields[`t:${m[1]}`] ?? 0) : 0;
      if (m && recordedUntil >= since) {
        holders.push({ workerId: Number(m[1]), identity, recordedUntil });
      }
    }
    return holders;
  }

  async close(): Promise<void> {
    try {
      await Promise.race([this.redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } finally {
      this.redis.disconnect();
    }
  }

  /**
   * One script; with REDIS_WAIT_REPLICAS, then `WAIT n timeout` routed to the hash's node (a
   * pipeline with the hash's key: its node in a Cluster). Commands of one connection run in
   * order, so the WAIT covers the script whichever way ioredis sent it (EVALSHA, or EVAL after
   * NOSCRIPT); an unchanged connection epoch proves both went over one connection.
   */
  private async run(command: LeaseCommand, args: string[]): Promise<{ reply: unknown; confirmed: boolean }> {
    const epoch = this.epoch;
    const before = epoch?.value ?? 0;
    const reply = await runLeaseCommand(this.redis, command, this.key, args);
    if (epoch === null) {
      return { reply, confirmed: true };
    }
    const { waitReplicas, waitTimeoutMs } = this.options;
    const replies = await this.redis
      .pipeline()
      .exists(this.key)
      .wait(waitReplicas, waitTimeoutMs)
      .exec()
      .catch((err: unknown) => [[null, 0], [err instanceof Error ? err : new Error(String(err)), 0]] as Array<[Error | null, unknown]>);
    const [error, acks] = replies?.[1] ?? [new Error('no reply to WAIT'), 0];
    return { reply, confirmed: !error && Number(acks) >= waitReplicas && epoch.value === before };
  }
}
