import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { SnowflakeConfig } from '../config/snowflake-config';
import { SnowflakeService } from './snowflake.service';

export interface SnowflakeStatus {
  mode: string;
  /** SNOWFLAKE_LAYOUT and its bit split. */
  layout: string;
  bits: { time: number; workerId: number; sequence: number };
  /** The layout's largest worker id (31 in js-safe, 1023 in leaf). */
  maxWorkerId: number;
  /** SNOWFLAKE_TWEPOCH, for decoding IDs elsewhere. */
  twepoch: number;
  /** This instance's identity in the worker-id registry. */
  identity: string;
  workerId: number | null;
  serving: boolean;
  /** ISO time of the last successful report to the registry, null before the first. */
  lastReport: string | null;
  /**
   * ISO time recorded in the registry as the upper bound of this instance's IDs: IDs are issued
   * only below it (and, in redis mode, only while the lease's deadline has not passed); null when
   * nothing is recorded (not started, stopped).
   */
  recordedUntil: string | null;
  reportIntervalMs: number;
}

/** `GET /admin/snowflake`: the worker id, mode and last report of this instance. */
@Controller('admin/snowflake')
@UseGuards(AdminTokenGuard)
export class SnowflakeAdminController {
  constructor(
    @Inject(SNOWFLAKE_CONFIG) private readonly config: SnowflakeConfig,
    private readonly snowflake: SnowflakeService,
  ) {}

  @Get()
  @ApiOperation({
    summary: "This instance's snowflake worker id",
    description:
      'JSON `{mode, layout, bits: {time, workerId, sequence}, maxWorkerId, twepoch, identity, workerId, serving, lastReport, ' +
      'recordedUntil, reportIntervalMs}`. mode is SNOWFLAKE_MODE (off, local, mysql, zk_normal, zk_recycle, redis); serving is false while ' +
      'IDs are refused (in redis mode: no lease held, or its deadline passed); recordedUntil is the time recorded in the registry, below which IDs are issued.',
  })
  status(): SnowflakeStatus {
    const cfg = this.config;
    const last = this.snowflake.lastReportAt;
    const recorded = this.snowflake.recordedUntil;
    const layout = this.snowflake.layout;
    return {
      mode: cfg.mode,
      layout: layout.name,
      bits: { time: layout.timeBits, workerId: layout.workerIdBits, sequence: layout.sequenceBits },
      maxWorkerId: layout.maxWorkerId,
      twepoch: cfg.twepoch,
      identity: `${cfg.ip}:${cfg.port}`,
      workerId: this.snowflake.workerId,
      serving: this.snowflake.serving,
      lastReport: last === null ? null : new Date(last).toISOString(),
      recordedUntil: recorded === null ? null : new Date(recorded).toISOString(),
      reportIntervalMs: cfg.reportIntervalMs,
    };
  }
}
