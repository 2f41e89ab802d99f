import { QueueKeys } from '../../../src/queue-id/core/queue-keys';
import { AppRegistry } from '../../../src/queue-id/core/app-registry';

describe('QueueKeys', () => {
  const keys = new QueueKeys('id.gen.');

  it('uses the seed key names', () => {
    expect(keys.list(1, 63)).toBe('id.gen.idList_1_63');
    expect(keys.lock(1, 63)).toBe('id.gen.lock_1_63');
  });

  it('parses only its own list keys', () => {
    expect(keys.parseList('id.gen.idList_12_5')).toEqual({ appId: 12, shardId: 5 });
    expect(keys.parseList('id.gen.idList_12_x')).toBeNull();
    expect(keys.parseList('other.idList_1_1')).toBeNull();
  });

  it('escapes glob characters of the prefix in the SCAN pattern', () => {
    expect(new QueueKeys('a*[b]?.').listPattern()).toBe('a\\*\\[b\\]\\?.idList_*');
  });
});

describe('AppRegistry', () => {
  it('maps apps to shards with their index limit and replaces the map whole', () => {
    const registry = new AppRegistry();
    expect(registry.isLoaded).toBe(false);
    registry.replace([
      { appId: 1, appName: 'a', shardId: 0, step: 10, maxLimitId: 0n },
      { appId: 1, appName: 'a', shardId: 1, step: 10, maxLimitId: 0n },
      { appId: 2, appName: 'b', shardId: 0, step: 5, maxLimitId: 16384n * 3n },
    ]);
    expect(registry.isLoaded).toBe(true);
    expect(registry.has(1, 1)).toBe(true);
    expect(registry.has(1, 2)).toBe(false);
    // (49152 - 2) >> 14 = 2
    expect(registry.get(2)?.shards.get(0)?.maxIndex).toBe(2n);
    registry.replace([]);
    expect(registry.get(1)).toBeUndefined();
  });
});
