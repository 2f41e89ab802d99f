import { loadConfig } from '../../../src/config/load-config';
import { expectConfigError } from '../../support/config-assert';

describe('loadConfig: segment section', () => {
  it('defaults to Leaf: on, tag sync every 60 s, MAX_STEP 1,000,000', () => {
    expect(loadConfig({}).segment).toEqual({
      enabled: true,
      syncCron: '45 * * * * *',
      maxStep: 1_000_000,
      loadTimeoutMs: 10_000,
      maxBatch: 1000,
      keyMaxLength: 128,
    });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      SEGMENT_ENABLED: 'false',
      SEGMENT_SYNC_CRON: 'off',
      SEGMENT_MAX_STEP: '5000',
      SEGMENT_LOAD_TIMEOUT_MS: '2000',
    });
    expect(c.segment).toMatchObject({ enabled: false, syncCron: null, maxStep: 5000, loadTimeoutMs: 2000 });
  });

  it.each([
    ['SEGMENT_ENABLED', 'sometimes'],
    ['SEGMENT_SYNC_CRON', '* * * * *'],
    ['SEGMENT_MAX_STEP', '0'],
    ['SEGMENT_MAX_STEP', '1.5'],
    ['SEGMENT_LOAD_TIMEOUT_MS', '10'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });
});
