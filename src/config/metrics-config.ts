import { ConfigError } from './config.error';
import { Env, readInt, readOptionalString } from './env-readers';

export interface MetricsConfig {
  /**
   * METRICS_STATE_TTL_MS: the state gauges (queue lengths, remaining capacity, segment buffers,
   * snowflake worker) are read from Redis/MySQL at most once per this many ms, whatever the
   * scrape rate; scrapes in between serve the cached values. 0 = on every scrape.
   */
  stateTtlMs: number;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`; unset = open. */
  token: string | undefined;
}

export function readMetricsConfig(env: Env): MetricsConfig {
  const token = readOptionalString(env, 'METRICS_TOKEN');
  if (token !== undefined && (token.length < 8 || /\s/.test(token))) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 8 characters without spaces (or unset to leave /metrics open)');
  }
  return {
    stateTtlMs: readInt(env, 'METRICS_STATE_TTL_MS', 5000, 0, 3_600_000),
    token,
  };
}
