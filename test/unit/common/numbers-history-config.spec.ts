import { loadConfig } from '../../../src/config/load-config';
import { expectConfigError } from '../../support/config-assert';

describe('loadConfig: number formats and the allocation history', () => {
  it('defaults', () => {
    const config = loadConfig({});
    expect(config.numbers).toEqual({ clockMarginMs: 1000, clockTrustMs: 60_000, boundaryWindowMs: 5000, timeZone: '+00:00', maxBatch: 1000 });
    expect(config.idHistory).toEqual({ retentionDays: 90, pruneCron: '20 17 * * * *' });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      NUMBER_CLOCK_MARGIN_MS: '7',
      NUMBER_CLOCK_TRUST_MS: '5000',
      NUMBER_BOUNDARY_WINDOW_MS: '0',
      NUMBER_TIME_ZONE: '-05:30',
      ID_HISTORY_RETENTION_DAYS: '365',
      ID_HISTORY_PRUNE_CRON: 'off',
    });
    expect(config.numbers).toEqual({ clockMarginMs: 7, clockTrustMs: 5000, boundaryWindowMs: 0, timeZone: '-05:30', maxBatch: 1000 });
    expect(config.idHistory).toEqual({ retentionDays: 365, pruneCron: null });
  });

  it.each([
    ['NUMBER_CLOCK_MARGIN_MS', '-1'],
    ['NUMBER_CLOCK_TRUST_MS', '999'],
    ['NUMBER_BOUNDARY_WINDOW_MS', '1.5'],
    ['NUMBER_TIME_ZONE', 'Asia/Shanghai'],
    ['NUMBER_TIME_ZONE', '+8:00'],
    ['NUMBER_TIME_ZONE', '+08:60'],
    ['NUMBER_TIME_ZONE', '+13:01'],
    ['NUMBER_TIME_ZONE', '-13:00'],
    ['NUMBER_TIME_ZONE', "+00:00'"],
    ['ID_HISTORY_RETENTION_DAYS', '0'],
    ['ID_HISTORY_RETENTION_DAYS', '36501'],
    ['ID_HISTORY_PRUNE_CRON', 'hourly'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });

  it('refuses a margin that is not below the trust', () => {
    expectConfigError('NUMBER_CLOCK_MARGIN_MS', '60000');
    expectConfigError('NUMBER_CLOCK_MARGIN_MS', '5000', { NUMBER_CLOCK_TRUST_MS: '5000' });
  });

  it('refuses a margin below 1000 ppm of the trust plus 2 ms (rate difference, millisecond truncation)', () => {
    expectConfigError('NUMBER_CLOCK_MARGIN_MS', '61');
    expectConfigError('NUMBER_CLOCK_MARGIN_MS', '0', { NUMBER_CLOCK_TRUST_MS: '1000' });
    expect(loadConfig({ NUMBER_CLOCK_MARGIN_MS: '62' }).numbers.clockMarginMs).toBe(62);
    expect(loadConfig({ NUMBER_CLOCK_MARGIN_MS: '3', NUMBER_CLOCK_TRUST_MS: '1000' }).numbers.clockMarginMs).toBe(3);
  });
});
