import { Controller, Get, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { HistorySampler } from '../metrics/history.sampler';
import { HistoryPoint } from '../metrics/core/activity-history';

export interface AppForecastView {
  appId: number;
  /** IDs left under max_limit_id (decimal string). */
  remaining: string;
  /** IDs consumed per second over the forecast window, by all instances. */
  idsPerSecond: number;
  /** Seconds until the app's first shard runs out; null when nothing was consumed (never at this rate). */
  secondsLeft: number | null;
  /** The shard that runs out first. */
  firstShard: number;
}

export interface DashboardHistory {
  /** Sampling interval (METRICS_HISTORY_INTERVAL_MS); 0 = history off. */
  intervalMs: number;
  /** The charts' span (15 min). */
  spanMs: number;
  forecastWindowMs: number;
  /** Oldest first: this instance's rates per interval and the queue depth per app. */
  points: HistoryPoint[];
  /** Apps whose forecast window has history. */
  forecast: AppForecastView[];
}

/** `GET /admin/dashboard/history`: the charts' data, from memory (no backend read). */
@Controller('admin/dashboard')
@UseGuards(AdminTokenGuard)
export class DashboardHistoryController {
  constructor(private readonly sampler: HistorySampler) {}

  @Get('history')
  history(): DashboardHistory {
    const view = this.sampler.view();
    return {
      ...view,
      forecast: view.forecast.map((f) => ({
        appId: f.app,
        remaining: f.remaining.toString(),
        idsPerSecond: f.idsPerSecond,
        secondsLeft: Number.isFinite(f.secondsLeft) ? f.secondsLeft : null,
        firstShard: f.firstShard,
      })),
    };
  }
}
