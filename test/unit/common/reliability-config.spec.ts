import { errorSpec } from '../../../src/common/error-catalog';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { loadConfig } from '../../../src/config/load-config';
import { offsetClock } from '../../../src/snowflake/core/clock';
import { expectConfigError } from '../../support/config-assert';

describe('reliability settings', () => {
  it('leave the failover protection off by default', () => {
    const c = loadConfig({});
    expect(c.queue.waitReplicas).toBe(0);
    expect(c.queue.waitTimeoutMs).toBe(200);
  });

  it('read REDIS_WAIT_REPLICAS and REDIS_WAIT_TIMEOUT_MS', () => {
    const c = loadConfig({ REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '50' });
    expect(c.queue).toMatchObject({ waitReplicas: 2, waitTimeoutMs: 50 });
  });

  it('never read the test hooks: the configuration has no place for them', () => {
    const c = loadConfig({ TEST_REFILL_DELAY_MS: '1500', TEST_CLOCK_OFFSET_MS: '-60000' });
    expect(JSON.stringify(c)).not.toMatch(/1500|-60000/);
  });

  it.each([
    ['REDIS_WAIT_REPLICAS', '-1'],
    ['REDIS_WAIT_REPLICAS', 'one'],
    ['REDIS_WAIT_TIMEOUT_MS', '0'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });

  it('map the new errors to 503 with their own codes', () => {
    expect(errorSpec(ErrorKind.QueueNotReplicated)).toEqual({ code: -6, status: 503 });
    expect(errorSpec(ErrorKind.ShuttingDown)).toEqual({ code: -110, status: 503 });
  });

  it('shift the snowflake clock by the injected offset', () => {
    const before = Date.now();
    const now = offsetClock(-60_000).now();
    expect(now).toBeLessThanOrEqual(Date.now() - 60_000);
    expect(now).toBeGreaterThanOrEqual(before - 60_000);
  });
});
