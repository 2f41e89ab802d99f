import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { Clock, MonotonicClock, throwIfStopping } from '../core/clock';
import { LeaseDeadline } from '../core/lease-deadline';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { LeaseClaim, WorkerLeaseStore } from '../core/worker-lease-store';
import { startRefused } from './start-refusal';
import { withTimeout } from '../../common/with-timeout';

export interface RedisRegistryOptions {
  store: WorkerLeaseStore;
  /** This instance's ip:port: shown to operators and used by the peer clock check, never an identity. */
  identity: string;
  /** SNOWFLAKE_LEASE_TTL_MS. */
  ttlMs: number;
  /** The lease is taken as lost this long before its TTL runs out. */
  marginMs: number;
  /** The layout's largest worker id. */
  maxWorkerId: number;
  /** How far a free id's recorded time may be ahead of this clock (waited out before issuing). */
  allowanceMs: number;
  /** Bound of every call to the store. */
  callTimeoutMs: number;
  /** The wall clock (recorded times, waits). */
  clock: Clock;
  /** Times the lease (never jumps, goes on while the process is paused). */
  monotonic: MonotonicClock;
}

/**
 * `SNOWFLAKE_MODE=redis`: a worker id leased from the service's Redis, with no identity setting.
 * The lease is claimed atomically and renewed at every report; the holder issues IDs only while
 * its LeaseDeadline (monotonic, counted from before the renewal was sent) has not passed and only
 * below the time it recorded with the renewal. A renewal that finds the id claimed by another
 * holder stops issuing at once; the next report takes a fresh id, waits until the clock is past
 * that id's recorded time, records its own, and only then hands it to the generator.
 */
export class RedisRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(RedisRegistry.name);
  private readonly owner = randomBytes(8).toString('hex');
  private readonly deadline: LeaseDeadline;
  private workerId: number | null = null;
  /** The recorded time of the id when it was claimed: every earlier holder's IDs are at or below it. */
  private floor = 0;
  /** Known lost (taken by another holder) and not yet replaced by a fresh id. */
  private lost = false;
  /**
   * A fresh id claimed by a recovery that failed later (its renewal timed out or went
   * unconfirmed): the next recovery renews it instead of claiming yet another id.
   */
  private pending: { workerId: number; floor: number } | null = null;

  constructor(private readonly options: RedisRegistryOptions) {
    this.deadline = new LeaseDeadline(options.ttlMs, options.marginMs, options.monotonic);
  }

  get description(): string {
    return `redis (${this.options.store.description})`;
  }

  async register(now: number): Promise<Registration> {
    let claimed: { workerId: number; floor: number };
    try {
      claimed = await this.claim(now);
    } catch (err) {
      throw err instanceof IdGenError && err.kind === ErrorKind.SnowflakeStartRefused
        ? err
        : startRefused(`redis mode needs Redis to lease a worker id: ${(err as Error).message}`);
    }
    this.workerId = claimed.workerId;
    this.floor = claimed.floor;
    this.lost = false;
    return { workerId: claimed.workerId, recordedUntil: claimed.floor };
  }

  /** Renews the lease (recording now + TTL), or replaces a lost one; `until` is unused. */
  async heartbeat(now: number, _until?: number, signal?: AbortSignal): Promise<Report> {
    const workerId = this.workerId;
    if (workerId === null) {
      throw new Error('the redis registry is not registered');
    }
    if (!this.lost) {
      const until = now + this.options.ttlMs;
      if (await this.renew(workerId, until)) {
        return { workerId, recordedUntil: until };
      }
      this.lost = true;
      this.deadline.drop();
      this.logger.error(`worker id ${workerId}: the lease was claimed by another instance; stopped issuing IDs`);
    }
    return this.recover(workerId, signal);
  }

  get heldWorkerId(): number | null {
    return this.lost ? null : this.workerId;
  }

  assertServing(): void {
    if (this.workerId === null) {
      throw new IdGenError(ErrorKind.SnowflakeNotReady, 'snowflake worker id not leased yet');
    }
    if (this.lost) {
      throw new IdGenError(
        ErrorKind.SnowflakeLeaseLost,
        `worker id ${this.workerId}: the lease was claimed by another instance; not issuing IDs until a fresh lease is held`,
      );
    }
    if (!this.deadline.held()) {
      throw new IdGenError(
        ErrorKind.SnowflakeLeaseLost,
        `worker id ${this.workerId}: the lease in Redis could not be renewed in time (${-Math.round(this.deadline.remainingMs())} ms past its deadline); not issuing IDs until it is renewed`,
      );
    }
  }

  async peers(since: number): Promise<PeerEndpoint[]> {
    const holders = await withTimeout(this.options.store.holders(since), this.options.callTimeoutMs, 'redis: reading the lease holders');
    const peers: PeerEndpoint[] = [];
    for (const h of holders) {
      const m = /^(.+):([0-9]{1,5})$/.exec(h.identity);
      if (h.workerId !== this.workerId && m) {
        peers.push({ ip: m[1], port: Number(m[2]), reportedAt: h.recordedUntil });
      }
    }
    return peers.sort((a, b) => (b.reportedAt ?? 0) - (a.reportedAt ?? 0)).slice(0, 32);
  }

  /** Graceful stop: the id is freed at once, its recorded time set to the last ID's (no wait for the next holder). */
  async release(maxTimestamp: number): Promise<void> {
    const workerId = this.workerId;
    const wasLost = this.lost;
    this.deadline.drop();
    this.lost = true;
    if (workerId === null || wasLost) {
      return;
    }
    const recorded = Math.max(maxTimestamp, this.floor);
    await withTimeout(this.options.store.release(workerId, this.owner, recorded), this.options.callTimeoutMs, 'redis: releasing the lease');
  }

  async close(): Promise<void> {
    await this.options.store.close();
  }

  /**
   * Takes a fresh id after a lost lease: serving resumes only when this resolves (the caller
   * switches). A stop (`signal`) ends every wait at once and hands out no fresh id; one claimed
   * already lapses in Redis after a TTL.
   */
  private async recover(oldWorkerId: number, signal?: AbortSignal): Promise<Report> {
    const { clock } = this.options;
    const claimed = this.pending ?? (await this.claim(clock.now(), signal));
    this.pending = claimed;
    // Every earlier holder's IDs are at or below the floor: issue only once the clock is past it.
    let behind = claimed.floor - clock.now();
    while (behind >= 0) {
      await clock.sleep(behind + 1, signal);
      behind = claimed.floor - clock.now();
    }
    throwIfStopping(signal);
    const until = clock.now() + this.options.ttlMs;
    this.floor = claimed.floor;
    const renewed = await this.renew(claimed.workerId, until);
    this.pending = null;
    if (!renewed) {
      throw new Error(`worker id ${claimed.workerId} was claimed by another instance right after this one claimed it`);
    }
    throwIfStopping(signal);
    // Synchronously before the caller switches its generator to the id returned here.
    this.workerId = claimed.workerId;
    this.lost = false;
    this.logger.warn(`recovered from a lost lease: worker id ${oldWorkerId} → ${claimed.workerId}`);
    return { workerId: claimed.workerId, recordedUntil: until, floor: claimed.floor };
  }

  private async claim(now: number, signal?: AbortSignal): Promise<{ workerId: number; floor: number }> {
    const { store, ttlMs, maxWorkerId, allowanceMs, identity, callTimeoutMs, clock } = this.options;
    for (let waits = 0; ; waits++) {
      const sentAt = this.deadline.stamp();
      const result = await withTimeout(
        store.claim({ owner: this.owner, ttlMs, maxWorkerId, now, allowanceMs, identity }),
        callTimeoutMs,
        'redis: claiming a worker id',
      );
      if (result.kind !== 'wait') {
        return this.claimed(result, sentAt);
      }
      if (waits === 2) {
        throw new Error(`${store.description} still refuses claims after waiting ${ttlMs} ms twice`);
      }
      this.logger.warn(
        `${store.description} is in a new epoch (a Redis restarted, restored, failed over, flushed, or new): no worker id is leased for ${result.waitMs} ms, until any holder from before has stopped`,
      );
      await clock.sleep(result.waitMs + 1, signal);
      now = clock.now();
    }
  }

  private claimed(result: Exclude<LeaseClaim, { kind: 'wait' }>, sentAt: number): { workerId: number; floor: number } {
    const { store, maxWorkerId, allowanceMs } = this.options;
    switch (result.kind) {
      case 'claimed':
        // Unconfirmed by the replicas required: held, but the deadline waits for a confirmed renewal.
        if (result.confirmed) {
          this.deadline.extend(sentAt);
        }
        return { workerId: result.workerId, floor: result.floor };
      case 'none-free':
        throw startRefused(`every worker id 0..${maxWorkerId} is leased by a live instance in ${store.description}; not starting another`);
      case 'ahead':
        throw startRefused(
          `every free worker id in ${store.description} has a recorded time more than ${allowanceMs} ms ahead of this clock (${new Date(result.floor).toISOString()}); is this clock behind?`,
        );
    }
  }

  /**
   * One renewal; extends the deadline from the moment before it was sent. Resolves false when the
   * lease is lost; throws on failure, timeout, or when the replicas required did not confirm it.
   */
  private async renew(workerId: number, until: number): Promise<boolean> {
    const sentAt = this.deadline.stamp();
    const outcome = await withTimeout(
      this.options.store.renew(workerId, this.owner, this.options.ttlMs, until),
      this.options.callTimeoutMs,
      'redis: renewing the worker-id lease',
    );
    if (outcome === 'unconfirmed') {
      throw new IdGenError(
        ErrorKind.BackendUnavailable,
        `worker id ${workerId}: the lease renewal was not confirmed by the Redis replicas required (REDIS_WAIT_REPLICAS) in time; it does not count`,
      );
    }
    if (outcome === 'renewed') {
      this.deadline.extend(sentAt);
    }
    return outcome === 'renewed';
  }
}
