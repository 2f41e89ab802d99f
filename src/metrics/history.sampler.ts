import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { METRICS_CONFIG } from '../config/config-tokens';
import { MetricsConfig } from '../config/metrics-config';
import { ActivityHistory, HISTORY_SPAN_MS, HistoryPoint } from './core/activity-history';
import { AppFamiliesText } from './core/app-families';
import { observationsOf } from './core/app-queue-summary';
import { AppForecast, CapacityForecast } from './core/capacity-forecast';
import { MetricsService } from './metrics.service';

export interface HistoryView {
  intervalMs: number;
  spanMs: number;
  forecastWindowMs: number;
  points: HistoryPoint[];
  forecast: readonly AppForecast[];
}

/**
 * A timer (METRICS_HISTORY_INTERVAL_MS), never the request path: each tick reads this instance's
 * counter totals from memory and the state (id_alloc + list lengths) through the same cached
 * snapshot /metrics uses, then feeds the dashboard's 15-minute ActivityHistory and the
 * CapacityForecast behind `shardleaf_queue_capacity_exhaustion_seconds`. A tick still running
 * when the next is due is not doubled; a failed state read leaves the forecast as it was.
 */
@Injectable()
export class HistorySampler implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(HistorySampler.name);
  private readonly intervalMs: number;
  private readonly forecastWindowMs: number;
  private readonly history: ActivityHistory | null;
  private readonly forecast: CapacityForecast;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastFailure = '';

  constructor(
    @Inject(METRICS_CONFIG) config: MetricsConfig,
    private readonly metrics: MetricsService,
  ) {
    this.intervalMs = config.historyIntervalMs;
    this.forecastWindowMs = config.forecastWindowMs;
    this.history = this.intervalMs > 0 ? new ActivityHistory(this.intervalMs) : null;
    this.forecast = new CapacityForecast({ windowMs: this.forecastWindowMs });
  }

  onModuleInit(): void {
    const forecast = this.forecast;
    const metrics = this.metrics;
    const families = new AppFamiliesText<AppForecast>([
      {
        name: 'shardleaf_queue_capacity_exhaustion_seconds',
        help:
          "Seconds until the app's first shard has no IDs left under max_limit_id (the 49-bit index range when 0), at the rate each shard's IDs " +
          'were consumed by all instances over CAPACITY_FORECAST_WINDOW_MS; +Inf when none were consumed; absent until that window has history',
        shared: true,
        value: (f) => f.secondsLeft,
      },
      {
        name: 'shardleaf_queue_capacity_exhaustion_shard',
        help: 'The app shard that runs out first at the measured rates (its shard number; see shardleaf_queue_capacity_exhaustion_seconds)',
        shared: true,
        value: (f) => f.firstShard,
      },
    ]);
    metrics.addText(async (leader) => families.render(forecast.apps(), leader));
    metrics.shardFamilies?.add({
      name: 'shardleaf_queue_shard_exhaustion_seconds',
      help: 'Seconds until the app shard has no IDs left under max_limit_id at the rate measured over CAPACITY_FORECAST_WINDOW_MS (METRICS_PER_SHARD=true)',
      shared: true,
      rows: async () => forecast.shards(),
      value: (f) => f.secondsLeft,
    });
  }

  onApplicationBootstrap(): void {
    if (this.intervalMs > 0) {
      void this.tick();
      this.timer = setInterval(() => void this.tick(), this.intervalMs);
      this.timer.unref();
    }
  }

  /**
   * Stops the timer. A tick in flight is not awaited (a read stuck on an unreachable backend must
   * not hold up the shutdown); it ends on its own, its failure caught.
   */
  onModuleDestroy(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** One sample now (the timer's job; exported for tests). Resolves when it is recorded. */
  tick(): Promise<void> {
    if (!this.running) {
      this.running = this.sample()
        .catch((err: unknown) => this.logger.warn(`history sample failed: ${(err as Error).message}`))
        .finally(() => {
          this.running = null;
        });
    }
    return this.running;
  }

  view(): HistoryView {
    return {
      intervalMs: this.intervalMs,
      spanMs: HISTORY_SPAN_MS,
      forecastWindowMs: this.forecastWindowMs,
      points: this.history?.points() ?? [],
      forecast: this.forecast.apps(),
    };
  }

  private async sample(): Promise<void> {
    const totalsAt = Date.now();
    const totals = await this.metrics.totals();
    let queueDepth: Record<string, number> | null = null;
    try {
      const state = await this.metrics.stateSnapshot();
      if (state.backends.mysql) {
        queueDepth = {};
        for (const a of state.apps) {
          queueDepth[a.app] = a.queueLength ?? 0;
        }
        // Made and dropped within this turn: not kept in the snapshot across the turns of a read.
        this.forecast.observe(observationsOf(state.shards), state.at);
        // Computed here, on the timer, rather than by the next scrape's gauges (16,384 shards).
        this.forecast.apps();
      }
      this.lastFailure = '';
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.lastFailure) {
        this.logger.warn(`history sample without state: ${message}`);
        this.lastFailure = message;
      }
    }
    this.history?.record(totalsAt, totals, queueDepth);
  }
}
