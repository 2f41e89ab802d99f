import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SnowflakeService } from './snowflake.service';

export interface SnowflakeStatus {
  mode: string;
  /** This instance's identity in the worker-id registry. */
  identity: string;
  workerId: number | null;
  serving: boolean;
  /** ISO time of the last successful report to the registry, null before the first. */
  lastReport: string | null;
  reportIntervalMs: number;
}

/** `GET /admin/snowflake`: the worker id, mode and last report of this instance. */
@Controller('admin/snowflake')
@UseGuards(AdminTokenGuard)
export class SnowflakeAdminController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly snowflake: SnowflakeService,
  ) {}

  @Get()
  status(): SnowflakeStatus {
    const cfg = this.config.snowflake;
    const last = this.snowflake.lastReportAt;
    return {
      mode: cfg.mode,
      identity: `${cfg.ip}:${cfg.port}`,
      workerId: this.snowflake.workerId,
      serving: this.snowflake.serving,
      lastReport: last === null ? null : new Date(last).toISOString(),
      reportIntervalMs: cfg.reportIntervalMs,
    };
  }
}
