import { ConfigError } from './config.error';
import { Env, readBool, readInt, readOptionalString } from './env-readers';

export interface MetricsConfig {
  /**
   * METRICS_STATE_TTL_MS: the state gauges (queue lengths, remaining capacity, segment buffers,
   * snowflake worker) are read from Redis/MySQL at most once per this many ms, whatever the
   * scrape rate; scrapes in between serve the cached values. A scrape after it answers at once
   * with the last read's values while they are younger than 4 × this, and the next read runs in
   * the background. 0 = on every scrape (waiting for the read).
   */
  stateTtlMs: number;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`; unset = open. */
  token: string | undefined;
  /**
   * METRICS_HISTORY_INTERVAL_MS: how often a timer samples the counters and the state for the
   * dashboard's 15-minute charts and the capacity forecast (never on the request path). 0 = off:
   * no charts, no forecast.
   */
  historyIntervalMs: number;
  /** CAPACITY_FORECAST_WINDOW_MS: the consumption rate behind the forecast is measured over this. */
  forecastWindowMs: number;
  /**
   * METRICS_PER_SHARD: also export the queue gauges per app shard (64 series per app and family:
   * 16,384 each at 256 apps). Off: per-app series only, with the lowest shard of each app.
   */
  perShard: boolean;
}

export function readMetricsConfig(env: Env): MetricsConfig {
  const token = readOptionalString(env, 'METRICS_TOKEN');
  if (token !== undefined && (token.length < 8 || /\s/.test(token))) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 8 characters without spaces (or unset to leave /metrics open)');
  }
  const historyIntervalMs = readInt(env, 'METRICS_HISTORY_INTERVAL_MS', 10_000, 0, 60_000);
  if (historyIntervalMs > 0 && historyIntervalMs < 100) {
    throw new ConfigError('METRICS_HISTORY_INTERVAL_MS', 'must be 0 (off) or at least 100');
  }
  const forecastWindowMs = readInt(env, 'CAPACITY_FORECAST_WINDOW_MS', 3_600_000, 1000, 7 * 86_400_000);
  return {
    stateTtlMs: readInt(env, 'METRICS_STATE_TTL_MS', 5000, 0, 3_600_000),
    token,
    historyIntervalMs,
    forecastWindowMs,
    perShard: readBool(env, 'METRICS_PER_SHARD', false),
  };
}
