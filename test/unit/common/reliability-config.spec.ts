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

  it('bound every backend call by default so that a caller gets an answer in about a second', () => {
    const c = loadConfig({});
    expect(c.redis.commandTimeoutMs).toBe(1000);
    expect(c.database.queryTimeoutMs).toBe(1000);
    expect(c.queue.demandLockWaitMs).toBe(250);
    // A lock left standing by an attempt that timed out blocks its shard's refills this long at most.
    expect(c.queue.lockTtlMs).toBe(10_000);
    // Under podman's 10 s and Kubernetes' 30 s.
    expect(c.shutdownTimeoutMs).toBe(8000);
  });

  it('read REDIS_COMMAND_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS, QUEUE_DEMAND_LOCK_WAIT_MS and SHUTDOWN_TIMEOUT_MS', () => {
    const c = loadConfig({
      REDIS_COMMAND_TIMEOUT_MS: '250',
      DB_QUERY_TIMEOUT_MS: '2000',
      QUEUE_DEMAND_LOCK_WAIT_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '5000',
      REDIS_WAIT_TIMEOUT_MS: '100',
    });
    expect([c.redis.commandTimeoutMs, c.database.queryTimeoutMs, c.queue.demandLockWaitMs, c.shutdownTimeoutMs]).toEqual([
      250, 2000, 0, 5000,
    ]);
  });

  it('refuse a WAIT timeout above half the Redis command timeout (the commands behind a WAIT wait for it)', () => {
    expectConfigError('REDIS_WAIT_TIMEOUT_MS', '501');
    expect(() => loadConfig({ REDIS_WAIT_TIMEOUT_MS: '251', REDIS_COMMAND_TIMEOUT_MS: '500' })).toThrow(/REDIS_WAIT_TIMEOUT_MS/);
    expect(() => loadConfig({ REDIS_WAIT_TIMEOUT_MS: '500', REDIS_COMMAND_TIMEOUT_MS: '1000' })).not.toThrow();
  });

  it('never read the test hooks: the configuration has no place for them', () => {
    const c = loadConfig({ TEST_REFILL_DELAY_MS: '1500', TEST_CLOCK_OFFSET_MS: '-60000' });
    expect(JSON.stringify(c)).not.toMatch(/1500|-60000/);
  });

  it.each([
    ['REDIS_WAIT_REPLICAS', '-1'],
    ['REDIS_WAIT_REPLICAS', 'one'],
    ['REDIS_WAIT_TIMEOUT_MS', '0'],
    ['REDIS_COMMAND_TIMEOUT_MS', '10'],
    ['REDIS_COMMAND_TIMEOUT_MS', 'soon'],
    ['DB_QUERY_TIMEOUT_MS', '0'],
    ['QUEUE_DEMAND_LOCK_WAIT_MS', '-1'],
    ['SHUTDOWN_TIMEOUT_MS', '100'],
    // SIGTERM must end the process within 10 s.
    ['SHUTDOWN_TIMEOUT_MS', '9501'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });

  it('map the new errors to 503 with their own codes', () => {
    expect(errorSpec(ErrorKind.QueueNotReplicated)).toEqual({ code: -6, status: 503 });
    expect(errorSpec(ErrorKind.ShuttingDown)).toEqual({ code: -110, status: 503 });
    expect(errorSpec(ErrorKind.QueueMarkerInvalid)).toEqual({ code: -7, status: 503 });
  });

  it('shift the snowflake clock by the injected offset', () => {
    const before = Date.now();
    const now = offsetClock(-60_000).now();
    expect(now).toBeLessThanOrEqual(Date.now() - 60_000);
    expect(now).toBeGreaterThanOrEqual(before - 60_000);
  });
});
