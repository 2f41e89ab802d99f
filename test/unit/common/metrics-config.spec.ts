import { loadConfig } from '../../../src/config/load-config';
import { expectConfigError } from '../../support/config-assert';

describe('loadConfig: metrics section', () => {
  it('defaults: state gauges cached 5 s, /metrics open, history every 10 s, forecast over 1 h', () => {
    expect(loadConfig({}).metrics).toEqual({ stateTtlMs: 5000, token: undefined, historyIntervalMs: 10_000, forecastWindowMs: 3_600_000, perShard: false });
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        METRICS_STATE_TTL_MS: '0',
        METRICS_TOKEN: 'scrape-secret',
        METRICS_HISTORY_INTERVAL_MS: '0',
        CAPACITY_FORECAST_WINDOW_MS: '60000',
        METRICS_PER_SHARD: 'true',
      }).metrics,
    ).toEqual({ stateTtlMs: 0, token: 'scrape-secret', historyIntervalMs: 0, forecastWindowMs: 60_000, perShard: true });
  });


  it.each([
    ['METRICS_STATE_TTL_MS', '-1'],
    ['METRICS_STATE_TTL_MS', '1.5'],
    ['METRICS_STATE_TTL_MS', '3600001'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space'],
    ['METRICS_HISTORY_INTERVAL_MS', '50'],
    ['METRICS_HISTORY_INTERVAL_MS', '60001'],
    ['CAPACITY_FORECAST_WINDOW_MS', '999'],
    ['METRICS_PER_SHARD', 'sometimes'],
    ['METRICS_PER_SHARD', '2'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });
});
