import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { SnowflakeConfig } from '../config/snowflake-config';
import { Clock } from './core/clock';
import { SnowflakeGenerator } from './core/snowflake-generator';
import { DecodedId, SnowflakeLayout, decodeId, layoutNamed } from './core/snowflake-layout';
import { WorkerIdRegistry } from './core/worker-id-registry';
import { Heartbeat } from './heartbeat';
import { PeerClockService } from './peer-clock.service';
import { SnowflakeReports } from './snowflake-reports';
import { SNOWFLAKE_CLOCK, WORKER_ID_REGISTRY } from './snowflake.tokens';

/**
 * Wires the worker-id registry of SNOWFLAKE_MODE to the pure generator: registers at module init
 * (a refusal fails the start), checks the peers' clocks, reports every interval, and on shutdown
 * records the last time and returns the worker id (zk_recycle) before closing connections.
 */
@Injectable()
export class SnowflakeService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SnowflakeService.name);
  private generator: SnowflakeGenerator | null = null;
  private heartbeat: Heartbeat | null = null;
  private lastReport: number | null = null;
  readonly layout: SnowflakeLayout;

  constructor(
    @Inject(SNOWFLAKE_CONFIG) private readonly snowflake: SnowflakeConfig,
    @Inject(WORKER_ID_REGISTRY) private readonly registry: WorkerIdRegistry | null,
    @Inject(SNOWFLAKE_CLOCK) private readonly clock: Clock,
    private readonly peerClock: PeerClockService,
    private readonly reports: SnowflakeReports,
  ) {
    this.layout = layoutNamed(snowflake.layout);
  }

  async onModuleInit(): Promise<void> {
    const registry = this.registry;
    if (registry === null) {
      this.logger.log('snowflake mode is off');
      return;
    }
    const cfg = this.snowflake;
    if (cfg.port === 0 && cfg.mode !== 'zk_recycle' && cfg.mode !== 'redis') {
      this.logger.warn(
        `the identity port is 0 (PORT=0): instances on ${cfg.ip} share one ip:port and so one worker id; set SNOWFLAKE_PORT`,
      );
    }
    let generator: SnowflakeGenerator;
    try {
      const { workerId, recordedUntil } = await registry.register(this.clock.now());
      await this.waitPast(recordedUntil, registry);
      await this.peerClock.check(registry);
      generator = new SnowflakeGenerator(
        {
          twepoch: cfg.twepoch,
          workerId,
          clockToleranceMs: cfg.clockToleranceMs,
          randomStartBound: cfg.randomStartBound,
          layout: this.layout,
          floor: recordedUntil,
          // Checked at every run of IDs: a lease that can no longer be known to be held, or a
          // worker id that is not the one held now, stops them.
          guard: (id) => assertMayIssue(registry, id, this.clock.now()),
        },
        this.clock,
      );
      // Record ahead before the first ID: the generator has no ceiling until then.
      const now = this.clock.now();
      const report = await registry.heartbeat(now, now + cfg.recordAheadMs);
      this.lastReport = this.clock.now();
      if (report.workerId !== workerId) {
        // The id was lost while starting (redis, zk_recycle) and a fresh one taken.
        generator.switchWorker(report.workerId, report.recordedUntil, report.floor ?? 0);
      } else {
        generator.raiseCeiling(report.recordedUntil);
      }
    } catch (err) {
      await this.closeQuietly(registry, this.clock.now());
      throw err;
    }
    const workerId = generator.workerId;
    this.generator = generator;
    this.heartbeat = new Heartbeat(cfg.reportIntervalMs, (signal) => this.beat(signal));
    this.heartbeat.start();
    this.logger.log(`snowflake ready: ${registry.description}, ${cfg.ip}:${cfg.port}, worker id ${workerId}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.heartbeat?.stop();
    this.heartbeat = null;
    const generator = this.generator;
    this.generator = null;
    if (this.registry !== null && generator !== null) {
      // No ID after this: the time recorded next is exactly the last ID's.
      generator.stop();
      await this.closeQuietly(this.registry, Math.max(this.clock.now(), generator.lastIssuedTimestamp));
    }
  }

  /** `count` strictly increasing IDs. */
  async nextIds(count: number): Promise<bigint[]> {
    if (this.registry === null) {
      throw new IdGenError(ErrorKind.SnowflakeDisabled, 'snowflake IDs are disabled on this instance (SNOWFLAKE_MODE=off)');
    }
    const generator = this.generator;
    if (generator === null) {
      throw new IdGenError(ErrorKind.SnowflakeNotReady, 'snowflake generator is not initialised');
    }
    return generator.nextBatch(count);
  }

  /** Splits an ID of the configured layout (RangeError outside it). */
  decode(id: bigint): DecodedId {
    return decodeId(id, this.snowflake.twepoch, this.layout);
  }

  now(): number {
    return this.clock.now();
  }

  /**
   * Whether IDs may be issued now: a worker id is held, its ownership (lease) is not lost, and the
   * clock is below the time recorded in the registry (the last reports succeeded).
   */
  get serving(): boolean {
    return this.notServingReason() === null;
  }

  /** Why IDs cannot be issued now (for readiness), or null when they can. */
  notServingReason(): string | null {
    if (this.registry === null) {
      return 'snowflake mode is off';
    }
    const generator = this.generator;
    if (generator === null) {
      return 'snowflake generator is not initialised';
    }
    const now = this.clock.now();
    try {
      assertMayIssue(this.registry, generator.workerId, now);
    } catch (err) {
      return (err as Error).message;
    }
    if (!generator.canIssueAt(now)) {
      return `the time recorded in ${this.registry.description} (${new Date(generator.ceiling).toISOString()}) was not extended: reports are failing; not issuing IDs`;
    }
    return null;
  }

  /** When the last periodic report to the registry succeeded (ms since 1970), null before the first. */
  get lastReportAt(): number | null {
    return this.lastReport;
  }

  /** The generator's ceiling: the time recorded in the registry, below which IDs are issued; null when none. */
  get recordedUntil(): number | null {
    const ceiling = this.generator?.ceiling;
    return ceiling === undefined || !Number.isFinite(ceiling) ? null : ceiling;
  }

  /** The worker id in use, or null when not serving (tests and logs). */
  get workerId(): number | null {
    return this.generator?.workerId ?? null;
  }

  private async beat(signal: AbortSignal): Promise<void> {
    const registry = this.registry;
    const generator = this.generator;
    if (registry === null || generator === null) {
      return;
    }
    try {
      const now = this.clock.now();
      const report = await registry.heartbeat(now, now + this.snowflake.recordAheadMs, signal);
      if (signal.aborted) {
        // Stopping: no fresh worker id and no higher ceiling for a generator about to stop.
        return;
      }
      this.lastReport = this.clock.now();
      this.reports.count(report.workerId === generator.workerId ? 'renewed' : 'switched');
      if (report.workerId !== generator.workerId) {
        // A fresh worker id: only its own recorded time bounds its IDs.
        generator.switchWorker(report.workerId, report.recordedUntil, report.floor ?? 0);
      } else {
        // Only after the time is recorded: IDs below it may be issued.
        generator.raiseCeiling(report.recordedUntil);
      }
    } catch (err) {
      if (signal.aborted) {
        return;
      }
      this.reports.count('failed');
      this.logger.warn(`report to ${registry.description} failed: ${(err as Error).message}`);
    }
  }

  /**
   * A crash leaves the time recorded ahead of the last IDs: no ID until the clock is past it (the
   * registry has refused a time further ahead than the record-ahead window + tolerance).
   */
  private async waitPast(recordedUntil: number, registry: WorkerIdRegistry): Promise<void> {
    let behind = recordedUntil - this.clock.now();
    if (behind < 0) {
      return;
    }
    this.logger.warn(
      `the time recorded in ${registry.description} is ${behind} ms ahead of this clock (a crash, or a restart on a clock set back): waiting until the clock is past it`,
    );
    while (behind >= 0) {
      await this.clock.sleep(behind + 1);
      behind = recordedUntil - this.clock.now();
    }
  }

  private async closeQuietly(registry: WorkerIdRegistry, maxTimestamp: number): Promise<void> {
    try {
      await registry.release(maxTimestamp);
    } catch (err) {
      this.logger.warn(`releasing the worker id failed: ${(err as Error).message}`);
    }
    try {
      await registry.close();
    } catch (err) {
      this.logger.warn(`closing ${registry.description} failed: ${(err as Error).message}`);
    }
  }
}

/**
 * Throws unless the registry lets this instance issue now with `workerId`: its lease is held and
 * `workerId` is the id it holds (a generator still on a lost id, before it switched to the fresh
 * one, is refused).
 */
function assertMayIssue(registry: WorkerIdRegistry, workerId: number, now: number): void {
  registry.assertServing(now);
  const held = registry.heldWorkerId;
  if (held !== workerId) {
    throw new IdGenError(
      ErrorKind.SnowflakeLeaseLost,
      `worker id ${workerId} is not the one held in ${registry.description} (${held === null ? 'none' : held}); not issuing IDs with it`,
    );
  }
}
