import { ConfigError } from '../../../src/config/config.error';
import { loadConfig } from '../../../src/config/load-config';

describe('Redis topology settings', () => {
  it('is standalone by default', () => {
    expect(loadConfig({}).redis.topology).toEqual({ kind: 'standalone' });
  });

  it('reads a Cluster from REDIS_CLUSTER_NODES', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002' }).redis.topology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it('reads Sentinel from REDIS_SENTINELS and REDIS_SENTINEL_NAME', () => {
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'ids' }).redis.topology).toEqual({
      kind: 'sentinel',
      name: 'ids',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
    });
  });

  it.each([
    [{ REDIS_CLUSTER_NODES: 'host-without-port' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'h:0' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_SENTINELS: 'a:1', REDIS_CLUSTER_NODES: 'b:2' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'bad name' }, 'REDIS_SENTINEL_NAME'],
    // A list and its push marker must share a slot: braces only as one non-empty hash tag.
    [{ KEY_PREFIX: 'a{}b{c}.' }, 'KEY_PREFIX'],
    [{ KEY_PREFIX: 'id.gen{' }, 'KEY_PREFIX'],
    [{ KEY_PREFIX: '{a}{b}.' }, 'KEY_PREFIX'],
  ])('refuses %p naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it('accepts a key prefix with one hash tag, which then holds the marker in the list\'s slot', () => {
    expect(loadConfig({ KEY_PREFIX: '{idgen}.' }).redis.keyPrefix).toBe('{idgen}.');
  });
});
