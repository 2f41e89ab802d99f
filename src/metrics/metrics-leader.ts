import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { REDIS_CONFIG } from '../config/config-tokens';
import { RedisConfig } from '../config/redis-config';
import { REDIS, RedisClient } from '../infra/redis/redis.tokens';

/** How long a lease lasts without renewal: a stopped leader's gauges are taken over after at most this. */
export const LEADER_LEASE_MS = 30_000;
/** Renewals per lease: a leader renews every LEADER_LEASE_MS / 3. */
const RENEWALS_PER_LEASE = 3;
/** Taken off the lease on this side, for the time the renewal's command took and clock drift. */
const LEASE_MARGIN_MS = 2_000;

/** Takes the key when it is free, renews it when it is ours; 1 when we hold it afterwards. */
const TAKE_OR_RENEW = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The instance that exports the gauges of shared state (queue lengths, capacities, forecasts:
 * what every instance would read alike from Redis and MySQL), so N instances do not export N
 * copies. A lease in Redis (`<KEY_PREFIX>metrics_leader`, LEADER_LEASE_MS), taken when free and
 * renewed by its holder on a timer; an instance that does not hold it tries again before each
 * scrape. The holder releases it at shutdown, so a successor takes over at its next try.
 * Counters and instance-local gauges do not depend on it.
 */
@Injectable()
export class MetricsLeader implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsLeader.name);
  private readonly key: string;
  private readonly token = randomBytes(12).toString('hex');
  /** Until when (local clock, ms) the lease is ours. */
  private heldUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private attempt: Promise<boolean> | null = null;
  private lastFailure = '';

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(REDIS_CONFIG) config: RedisConfig,
  ) {
    this.key = `${config.keyPrefix}metrics_leader`;
  }

  onApplicationBootstrap(): void {
    void this.renew();
    this.timer = setInterval(() => void this.renew(), LEADER_LEASE_MS / RENEWALS_PER_LEASE);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    if (this.isLeader()) {
      this.heldUntil = 0;
      await Promise.resolve(this.redis.eval(RELEASE, 1, this.key, this.token)).catch(() => undefined);
    }
  }

  /** Whether this instance holds the lease now (no Redis command). */
  isLeader(): boolean {
    return Date.now() < this.heldUntil;
  }

  /** Holds the lease, or tries to take it now (one command; concurrent callers share it). */
  async check(): Promise<boolean> {
    return this.isLeader() || this.renew();
  }

  private renew(): Promise<boolean> {
    this.attempt ??= this.takeOrRenew().finally(() => {
      this.attempt = null;
    });
    return this.attempt;
  }

  private async takeOrRenew(): Promise<boolean> {
    const startedAt = Date.now();
    try {
      const held = (await this.redis.eval(TAKE_OR_RENEW, 1, this.key, this.token, String(LEADER_LEASE_MS))) === 1;
      this.heldUntil = held ? startedAt + LEADER_LEASE_MS - LEASE_MARGIN_MS : 0;
      this.lastFailure = '';
      return held;
    } catch (err) {
      // Unknown whether it ran: the lease counts until it would have lapsed.
      const message = (err as Error).message;
      if (message !== this.lastFailure) {
        this.logger.warn(`metrics leader lease not renewed: ${message}`);
        this.lastFailure = message;
      }
      return this.isLeader();
    }
  }
}
