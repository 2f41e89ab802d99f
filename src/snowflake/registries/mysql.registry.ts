import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { Clock } from '../core/clock';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, identityInUse } from './start-refusal';
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
}

const MAX_PEERS = 32;

/**
 * The fork's `mysql` mode: one `leaf_workerid_alloc` row per ip:port, whose row id is the worker
 * id (fixed for that ip:port). The row is owned by one live instance at a time (`owner` token,
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
    const { ip, port, repository } = this.options;
    const ipPort = `${ip}:${port}`;
    let row = await repository.findByIpPort(ipPort);
    if (!row) {
      await repository.insert(ip, port, this.owner);
      row = await repository.findByIpPort(ipPort);
      if (!row) {
        throw new Error(`leaf_workerid_alloc row of ${ipPort} vanished while registering`);
      }
    }
    const workerId = assertWorkerIdInRange(row.id, `leaf_workerid_alloc row of ${ipPort} (worker id = row id)`);
    const started = this.options.clock.now();
    await this.claim(workerId, ipPort);
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
    this.workerId = workerId;
    this.lost = false;
    return { workerId, recordedUntil };
  }

  async heartbeat(_now: number, until: number): Promise<Report> {
    const workerId = this.requireWorkerId();
    if (this.lost || !(await this.options.repository.report(workerId, this.owner, until))) {
      if (!this.lost) {
        this.lost = true;
        this.logger.error(
          `leaf_workerid_alloc row ${workerId} (${this.options.ip}:${this.options.port}) is owned by another instance; stopped issuing IDs`,
        );
      }
      throw this.lostError(workerId);
    }
    return { workerId, recordedUntil: until };
  }

  assertServing(): void {
    if (this.lost && this.workerId !== null) {
      throw this.lostError(this.workerId);
    }
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
   * Takes the row. Owned by an instance that reported within the liveness window: waits until it
   * has not reported for that long (a crashed predecessor), and refuses as soon as it reports
   * again (a live instance with the same ip:port).
   */
  private async claim(workerId: number, ipPort: string): Promise<void> {
    const { repository, livenessMs, clock } = this.options;
    let first: string | null | undefined;
    const started = clock.now();
    const pollMs = Math.max(20, Math.min(250, Math.floor(livenessMs / 10)));
    for (;;) {
      if (await repository.claim(workerId, this.owner, livenessMs)) {
        return;
      }
      const holder = await repository.holder(workerId);
      const seen = `${holder?.owner}@${holder?.lastReport}`;
      if (first === undefined) {
        first = seen;
        this.logger.warn(
          `leaf_workerid_alloc row of ${ipPort} is owned by an instance that reported ${holder?.agoMs} ms ago; waiting up to ${livenessMs} ms for it to lapse`,
        );
      } else if (seen !== first || clock.now() - started > 2 * livenessMs) {
        throw identityInUse(ipPort, holder?.agoMs ?? 0, 'leaf_workerid_alloc');
      }
      await clock.sleep(pollMs);
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
