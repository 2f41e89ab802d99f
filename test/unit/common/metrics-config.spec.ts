import { loadConfig } from '../../../src/config/load-config';
import { expectConfigError } from '../../support/config-assert';

describe('loadConfig: metrics section', () => {
  it('defaults: state gauges cached 5 s, /metrics open', () => {
    expect(loadConfig({}).metrics).toEqual({ stateTtlMs: 5000, token: undefined });
  });

  it('reads every variable', () => {
    expect(loadConfig({ METRICS_STATE_TTL_MS: '0', METRICS_TOKEN: 'scrape-secret' }).metrics).toEqual({
      stateTtlMs: 0,
      token: 'scrape-secret',
    });
  });

  it.each([
    ['METRICS_STATE_TTL_MS', '-1'],
    ['METRICS_STATE_TTL_MS', '1.5'],
    ['METRICS_STATE_TTL_MS', '3600001'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });
});
