import { ConfigError } from '../../../src/config/config.error';
import { DEFAULT_TWEPOCH, readSnowflakeConfig } from '../../../src/config/snowflake-config';

const NOW = 1_763_769_600_000;

function read(env: Record<string, string>, port = 8080) {
  return readSnowflakeConfig(env, port, NOW);
}

function expectConfigError(env: Record<string, string>, variable: string): void {
  let err: unknown;
  try {
    read(env);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as Error).message).toContain(variable);
}

describe('snowflake config', () => {
  it('has defaults that work on a developer machine', () => {
    const cfg = read({ SNOWFLAKE_IP: '10.0.0.1' });
    expect(cfg).toMatchObject({
      mode: 'mysql',
      name: 'shardleaf',
      twepoch: DEFAULT_TWEPOCH,
      ip: '10.0.0.1',
      port: 8080,
      reportIntervalMs: 3000,
      recordAheadMs: 9000,
      leaseMs: 600_000,
      leaseMarginMs: 60_000,
      clockToleranceMs: 5,
      randomStartBound: 100,
      peerMaxSkewMs: 5000,
      zk: { address: '127.0.0.1:2181' },
    });
  });

  it('records 3 × the report interval ahead by default, and refuses a window not above the interval', () => {
    expect(read({ SNOWFLAKE_REPORT_INTERVAL_MS: '500' }).recordAheadMs).toBe(1500);
    expect(read({ SNOWFLAKE_RECORD_AHEAD_MS: '3001' }).recordAheadMs).toBe(3001);
    expectConfigError({ SNOWFLAKE_RECORD_AHEAD_MS: '3000' }, 'SNOWFLAKE_RECORD_AHEAD_MS');
    expectConfigError({ SNOWFLAKE_REPORT_INTERVAL_MS: '1000', SNOWFLAKE_RECORD_AHEAD_MS: '500' }, 'SNOWFLAKE_RECORD_AHEAD_MS');
    expectConfigError({ SNOWFLAKE_RECORD_AHEAD_MS: 'soon' }, 'SNOWFLAKE_RECORD_AHEAD_MS');
  });

  it('takes the identity port from PORT unless SNOWFLAKE_PORT is set', () => {
    expect(read({}, 9000).port).toBe(9000);
    expect(read({ SNOWFLAKE_PORT: '9100' }, 9000).port).toBe(9100);
  });

  it('refuses a twepoch that is not in the past', () => {
    expectConfigError({ SNOWFLAKE_TWEPOCH: String(NOW + 1) }, 'SNOWFLAKE_TWEPOCH');
    expectConfigError({ SNOWFLAKE_TWEPOCH: 'soon' }, 'SNOWFLAKE_TWEPOCH');
    expect(read({ SNOWFLAKE_TWEPOCH: String(NOW - 1) }).twepoch).toBe(NOW - 1);
  });

  it('validates the mode, name and ZooKeeper address', () => {
    expectConfigError({ SNOWFLAKE_MODE: 'zk' }, 'SNOWFLAKE_MODE');
    expectConfigError({ SNOWFLAKE_NAME: 'a/b' }, 'SNOWFLAKE_NAME');
    expectConfigError({ ZK_ADDRESS: 'localhost' }, 'ZK_ADDRESS');
    expect(read({ ZK_ADDRESS: 'zk1:2181,zk2:2181/leaf' }).zk.address).toBe('zk1:2181,zk2:2181/leaf');
  });

  it('reads a worker id map for local mode', () => {
    const cfg = read({
      SNOWFLAKE_MODE: 'local',
      SNOWFLAKE_IP: '10.0.0.1',
      SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.1:8080": 1, "10.0.0.2:8080": "2"}',
    });
    expect(cfg.workerIdMap).toEqual({ '10.0.0.1:8080': 1, '10.0.0.2:8080': 2 });
    expect(read({ SNOWFLAKE_MODE: 'local', SNOWFLAKE_IP: '10.0.0.1', SNOWFLAKE_WORKER_ID: '7' }).workerIdMap).toEqual({
      '10.0.0.1:8080': 7,
    });
  });

  it('refuses bad worker id maps with the variable named', () => {
    const base = { SNOWFLAKE_MODE: 'local', SNOWFLAKE_IP: '10.0.0.1' };
    expectConfigError(base, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID_MAP: '{bad' }, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID_MAP: '[1]' }, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.1:8080": 1024}' }, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.1": 1}' }, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError(
      { ...base, SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.1:8080": 1, "10.0.0.2:8080": 1}' },
      'SNOWFLAKE_WORKER_ID_MAP',
    );
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.9:8080": 1}' }, 'SNOWFLAKE_WORKER_ID_MAP');
    expectConfigError({ ...base, SNOWFLAKE_WORKER_ID: '1024' }, 'SNOWFLAKE_WORKER_ID');
  });

  it('keeps the lease longer than the margin plus two reports, and the peer skew below the margin', () => {
    expectConfigError({ SNOWFLAKE_LEASE_MS: '5000', SNOWFLAKE_LEASE_MARGIN_MS: '4000' }, 'SNOWFLAKE_LEASE_MS');
    expectConfigError(
      { SNOWFLAKE_MODE: 'zk_recycle', SNOWFLAKE_LEASE_MARGIN_MS: '3000', SNOWFLAKE_PEER_MAX_SKEW_MS: '3000' },
      'SNOWFLAKE_PEER_MAX_SKEW_MS',
    );
    expect(read({ SNOWFLAKE_LEASE_MS: '2000', SNOWFLAKE_LEASE_MARGIN_MS: '500', SNOWFLAKE_REPORT_INTERVAL_MS: '200' }).leaseMs).toBe(2000);
  });

  it('reads SNOWFLAKE_LAYOUT (default leaf) and shrinks the worker-id range and random start of js-safe', () => {
    expect(read({}).layout).toBe('leaf');
    const js = read({ SNOWFLAKE_LAYOUT: 'js-safe' });
    expect(js).toMatchObject({ layout: 'js-safe', randomStartBound: 8 });
    expectConfigError({ SNOWFLAKE_LAYOUT: 'js' }, 'SNOWFLAKE_LAYOUT');
    // 128 sequences per ms: a random start above 28 would leave fewer than 100 IDs per ms.
    expect(read({ SNOWFLAKE_LAYOUT: 'js-safe', SNOWFLAKE_RANDOM_START_BOUND: '28' }).randomStartBound).toBe(28);
    expectConfigError({ SNOWFLAKE_LAYOUT: 'js-safe', SNOWFLAKE_RANDOM_START_BOUND: '29' }, 'SNOWFLAKE_RANDOM_START_BOUND');
    expect(read({ SNOWFLAKE_RANDOM_START_BOUND: '4096' }).randomStartBound).toBe(4096);
    const local = { SNOWFLAKE_LAYOUT: 'js-safe', SNOWFLAKE_MODE: 'local', SNOWFLAKE_IP: '10.0.0.1' };
    expect(read({ ...local, SNOWFLAKE_WORKER_ID: '31' }).workerIdMap).toEqual({ '10.0.0.1:8080': 31 });
    expectConfigError({ ...local, SNOWFLAKE_WORKER_ID: '32' }, 'SNOWFLAKE_WORKER_ID');
    expectConfigError({ ...local, SNOWFLAKE_WORKER_ID_MAP: '{"10.0.0.1:8080": 40}' }, 'SNOWFLAKE_WORKER_ID_MAP');
  });

  it('reads SNOWFLAKE_MODE=redis and SNOWFLAKE_LEASE_TTL_MS (default 10 s, renewed at least twice before ttl - a fifth)', () => {
    expect(read({ SNOWFLAKE_MODE: 'redis' })).toMatchObject({ mode: 'redis', leaseTtlMs: 10_000, reportIntervalMs: 3000 });
    expect(read({ SNOWFLAKE_MODE: 'redis', SNOWFLAKE_LEASE_TTL_MS: '2500', SNOWFLAKE_REPORT_INTERVAL_MS: '1000' }).leaseTtlMs).toBe(2500);
    // 2400 - 480 = 1920 < 2 × 1000
    expectConfigError({ SNOWFLAKE_MODE: 'redis', SNOWFLAKE_LEASE_TTL_MS: '2400', SNOWFLAKE_REPORT_INTERVAL_MS: '1000' }, 'SNOWFLAKE_LEASE_TTL_MS');
    expectConfigError({ SNOWFLAKE_MODE: 'redis', SNOWFLAKE_LEASE_TTL_MS: '100' }, 'SNOWFLAKE_LEASE_TTL_MS');
    expectConfigError({ SNOWFLAKE_LEASE_TTL_MS: 'long' }, 'SNOWFLAKE_LEASE_TTL_MS');
  });
});
