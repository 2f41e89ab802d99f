import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { Clock, throwIfStopping } from '../core/clock';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, identityInUse, startRefused } from './start-refusal';
import { WorkerIdAllocRepository } from './worker-id-alloc.repository';

export interface MysqlRegistryOptions {
  ip: string;
  port: number;
  repository: WorkerIdAllocRepository;
  /**
   * A row whose owner reported (database clock) less than this ago belongs to a live instance.
   * At least the record-ahead window: a holder that cannot report stops issuing (its ceiling
   * passes) before its row can be taken.
   */
  livenessMs: number;
  /** How far the recorded time may be ahead of the clock at start (waited out, not refused). */
  startAllowanceMs: number;
  /** Waits while a crashed predecessor's ownership runs out. */
  clock: Clock;
  /** The layout's largest worker id: rows with a higher id are never used. */
  maxWorkerId: number;
  /**
   * A row of another ip:port may be taken over once its holder has been silent this long (owner
   * freed by a graceful stop: at once). More than livenessMs, so a live holder is never taken.
   */
  recycleAfterMs: number;
}

const MAX_PEERS = 32;
/** Departed rows tried per look-up, and look-ups per start (rows taken by others in between). */
const TAKEOVER_CANDIDATES = 16;
const REGISTER_ATTEMPTS = 5;

/**
 * The fork's `mysql` mode: one `leaf_workerid_alloc` row per ip:port, whose row id is the worker
 * id (fixed for that ip:port while it keeps the row). A new ip:port takes over the row of a
 * departed instance (recycled) before it inserts a row of its own, and never uses a row id above
 * the layout's largest worker id. The row is owned by one live instance at a time (`owner` token,
 * `last_report` by the database's clock): a start finding it owned and reported within the
 * liveness window waits for that ownership to run out (a crashed predecessor) and is refused when
 * the owner reports again (a second live instance with the same identity). The row's
 * `max_timestamp` is recorded ahead (an upper bound of the IDs issued); a start waits until its
 * clock is past it.
 */
export class MysqlRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(MysqlRegistry.name);
  private readonly owner = randomBytes(8).toString('hex');
  private workerId: number | null = null;
  private lost = false;

  constructor(private readonly options: MysqlRegistryOptions) {}

  get description(): string {
    return 'mysql (leaf_workerid_alloc)';
  }

  async register(now: number): Promise<Registration> {
    const registration = await this.acquireRow(now);
    this.workerId = registration.workerId;
    this.lost = false;
    return registration;
  }

  /**
   * Records `until` while the row is still this instance's. A row taken by another instance
   * (after a stall longer than the grace period) stops issuing at once; the reports after that
   * register a row again (reregister).
   */
  async heartbeat(now: number, until: number, signal?: AbortSignal): Promise<Report> {
    const workerId = this.requireWorkerId();
    if (!this.lost) {
      if (await this.options.repository.report(workerId, this.owner, until)) {
        return { workerId, recordedUntil: until };
      }
      this.lost = true;
      this.logger.error(
        `leaf_workerid_alloc row ${workerId} (${this.options.ip}:${this.options.port}) is owned by another instance; stopped issuing IDs`,
      );
    }
    return this.reregister(workerId, until - now, signal);
  }

  assertServing(): void {
    if (this.lost && this.workerId !== null) {
      throw this.lostError(this.workerId);
    }
  }

  get heldWorkerId(): number | null {
    return this.lost ? null : this.workerId;
  }

  async peers(since: number): Promise<PeerEndpoint[]> {
    const rows = await this.options.repository.recentOthers(this.requireWorkerId(), since, MAX_PEERS);
    return rows.map((row) => ({ ip: row.ip, port: Number(row.port), reportedAt: row.maxTimestamp ?? undefined }));
  }

  async release(maxTimestamp: number): Promise<void> {
    if (this.workerId !== null && !this.lost) {
      await this.options.repository.release(this.workerId, this.owner, maxTimestamp);
    }
  }

  async close(): Promise<void> {}

  /**
   * A row (this ip:port's own, a departed instance's, or a new one) as at start, and its recorded
   * time; refused when the clock is behind that by more than the allowance (the row freed again).
   */
  private async acquireRow(now: number, signal?: AbortSignal): Promise<Registration> {
    const { ip, port, repository } = this.options;
    const ipPort = `${ip}:${port}`;
    const started = this.options.clock.now();
    let workerId: number | null = null;
    for (let attempt = 0; workerId === null; attempt++) {
      if (attempt === REGISTER_ATTEMPTS) {
        throw startRefused(`leaf_workerid_alloc: the row of ${ipPort} kept changing hands while registering; refusing to start`);
      }
      throwIfStopping(signal);
      workerId = await this.acquire(ipPort, now, signal);
    }
    now += this.options.clock.now() - started;
    // Read after the claim: a previous holder can no longer extend it.
    const held = await repository.holder(workerId);
    const recordedUntil = held?.maxTimestamp ?? 0;
    try {
      assertClockNotBehind(now, recordedUntil, `leaf_workerid_alloc (ip_port ${ipPort})`, this.options.startAllowanceMs);
    } catch (err) {
      // Refused: free the row again (time unchanged) so a corrected start need not wait.
      await repository.release(workerId, this.owner, recordedUntil);
      throw err;
    }
    return { workerId, recordedUntil };
  }

  /**
   * After the row was lost: a row again, as at start; waits until the clock is past its recorded
   * time, records `now + aheadMs`, and only then resolves it (the caller switches its generator;
   * not serving until then). A refusal (the identity in use, no free row) rejects this report: the
   * next one tries again. A stop ends the waits at once and frees the row taken.
   */
  private async reregister(lostWorkerId: number, aheadMs: number, signal?: AbortSignal): Promise<Report> {
    const { clock, repository } = this.options;
    const { workerId, recordedUntil } = await this.acquireRow(clock.now(), signal);
    let until: number;
    try {
      let behind = recordedUntil - clock.now();
      while (behind >= 0) {
        await clock.sleep(behind + 1, signal);
        behind = recordedUntil - clock.now();
      }
      throwIfStopping(signal);
      until = clock.now() + aheadMs;
    } catch (err) {
      await repository.release(workerId, this.owner, recordedUntil).catch(() => undefined);
      throw err;
    }
    if (!(await repository.report(workerId, this.owner, until))) {
      throw new Error(`leaf_workerid_alloc row ${workerId} was taken by another instance right after this one took it`);
    }
    // Synchronously before the caller switches its generator to the id returned here.
    this.workerId = workerId;
    this.lost = false;
    this.logger.warn(`registered again after losing its row: worker id ${lostWorkerId} → ${workerId}`);
    return { workerId, recordedUntil: until, floor: recordedUntil };
  }

  /**
   * The worker id this start owns now, or null when the row moved under it (taken over by another
   * ip:port, inserted by another start): the caller looks again.
   * 1. this ip:port's row, when its id is in range (a crashed predecessor is waited out);
   * 2. else a departed instance's row, taken over;
   * 3. else a new row, when its id is in range (else deleted again: refused, all rows are live).
   */
  private async acquire(ipPort: string, now: number, signal?: AbortSignal): Promise<number | null> {
    const { ip, port, repository, maxWorkerId, livenessMs } = this.options;
    const own = await repository.findByIpPort(ipPort);
    if (own && own.id >= 1 && own.id <= maxWorkerId) {
      return (await this.claim(own.id, ipPort, signal)) ? own.id : null;
    }
    if (own) {
      if (!(await repository.retire(own.id, ipPort, livenessMs))) {
        throw identityInUse(ipPort, 0, 'leaf_workerid_alloc');
      }
      this.logger.warn(`leaf_workerid_alloc row ${own.id} of ${ipPort} is outside 1..${maxWorkerId}: renamed retired#${own.id}; taking another row`);
    }
    const recycled = await this.takeOverDeparted(ipPort, now);
    if (recycled !== null) {
      return recycled;
    }
    const inserted = await repository.insert(ip, port, this.owner);
    if (inserted === null) {
      return null;
    }
    if (inserted <= maxWorkerId) {
      return inserted;
    }
    await repository.deleteInserted(inserted, this.owner);
    throw startRefused(
      `no free worker id in leaf_workerid_alloc: every row 1..${maxWorkerId} belongs to a live instance (a row is taken over ${this.options.recycleAfterMs} ms after its instance stopped reporting; a row shardleaf never claimed, a Leaf fork instance's, never), and a new row would get id ${inserted}; refusing to start`,
    );
  }

  /** Takes over the row of a departed instance (one conditional update per candidate), or null. */
  private async takeOverDeparted(ipPort: string, now: number): Promise<number | null> {
    const { ip, port, repository, maxWorkerId, recycleAfterMs } = this.options;
    for (let lookup = 0; lookup < REGISTER_ATTEMPTS; lookup++) {
      const latest = now + this.options.startAllowanceMs;
      const candidates = await repository.departed(maxWorkerId, recycleAfterMs, latest, TAKEOVER_CANDIDATES);
      for (const id of candidates) {
        const outcome = await repository.takeOver(id, ip, port, this.owner, recycleAfterMs);
        if (outcome === 'ip-port-in-use') {
          // Another start with this ip:port got a row since this one looked for its own.
          throw identityInUse(ipPort, 0, 'leaf_workerid_alloc');
        }
        if (outcome === 'taken') {
          this.logger.log(`took over leaf_workerid_alloc row ${id} (a departed instance's) for ${ipPort}: worker id ${id}`);
          return id;
        }
      }
      if (candidates.length < TAKEOVER_CANDIDATES) {
        return null;
      }
    }
    return null;
  }

  /**
   * Takes this ip:port's row; false when the row is no longer this ip:port's. Owned by an instance
   * that reported within the liveness window: waits until it has not reported for that long (a
   * crashed predecessor), and refuses as soon as it reports again (a live instance with the same
   * ip:port).
   */
  private async claim(workerId: number, ipPort: string, signal?: AbortSignal): Promise<boolean> {
    const { repository, livenessMs, clock } = this.options;
    let first: string | null | undefined;
    const started = clock.now();
    const pollMs = Math.max(20, Math.min(250, Math.floor(livenessMs / 10)));
    for (;;) {
      if (await repository.claim(workerId, ipPort, this.owner, livenessMs)) {
        return true;
      }
      const holder = await repository.holder(workerId);
      if (holder === null || holder.ipPort !== ipPort) {
        return false;
      }
      const seen = `${holder?.owner}@${holder?.lastReport}`;
      if (first === undefined) {
        first = seen;
        this.logger.warn(
          `leaf_workerid_alloc row of ${ipPort} is owned by an instance that reported ${holder?.agoMs} ms ago; waiting up to ${livenessMs} ms for it to lapse`,
        );
      } else if (seen !== first || clock.now() - started > 2 * livenessMs) {
        throw identityInUse(ipPort, holder?.agoMs ?? 0, 'leaf_workerid_alloc');
      }
      await clock.sleep(pollMs, signal);
    }
  }

  private lostError(workerId: number): IdGenError {
    return new IdGenError(
      ErrorKind.SnowflakeLeaseLost,
      `worker id ${workerId}: the leaf_workerid_alloc row of ${this.options.ip}:${this.options.port} was taken by another instance; not issuing IDs`,
    );
  }

  private requireWorkerId(): number {
    if (this.workerId === null) {
      throw new Error('the mysql registry is not registered');
    }
    return this.workerId;
  }
}
