import { Logger } from '@nestjs/common';
import { loadConfig } from '../../../src/config/load-config';
import { systemClock, systemMonotonicClock } from '../../../src/snowflake/core/clock';
import { PeerClockService } from '../../../src/snowflake/peer-clock.service';
import { RedisRegistry } from '../../../src/snowflake/registries/redis.registry';
import { SnowflakeReports } from '../../../src/snowflake/snowflake-reports';
import { SnowflakeService } from '../../../src/snowflake/snowflake.service';
import { InMemoryLeaseStore } from './in-memory-lease-store';

const TTL = 60_000;

/**
 * SIGTERM ends the process within 10 s whatever the backends do: a stop during a lease recovery
 * (a fresh id's floor to wait out, or a store that asks to wait a TTL) abandons the wait. Real
 * timers: the waits are a minute long, the stop must not take them.
 */
describe('SnowflakeService stop during a redis lease recovery', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  async function recovering(setUp: (store: InMemoryLeaseStore) => void): Promise<{ svc: SnowflakeService; store: InMemoryLeaseStore }> {
    const store = new InMemoryLeaseStore(() => Date.now());
    store.run = store.serverRun;
    store.since = Date.now() - 1;
    const registry = new RedisRegistry({
      store,
      identity: '127.0.0.1:1',
      ttlMs: TTL,
      marginMs: TTL / 5,
      maxWorkerId: 31,
      allowanceMs: TTL + 5,
      callTimeoutMs: 1000,
      clock: systemClock,
      monotonic: systemMonotonicClock,
    });
    const config = loadConfig({ SNOWFLAKE_IP: '127.0.0.1', SNOWFLAKE_REPORT_INTERVAL_MS: '50', SNOWFLAKE_LAYOUT: 'js-safe' });
    const peerClock = { check: async () => undefined } as unknown as PeerClockService;
    const svc = new SnowflakeService(config.snowflake, registry, systemClock, peerClock, new SnowflakeReports());
    await svc.onModuleInit();
    expect(svc.workerId).toBe(0);
    // Another instance holds id 0 now: the next report finds the lease lost and recovers.
    store.entries.set(0, { owner: 'other', expires: Date.now() + TTL });
    setUp(store);
    const callsBefore = store.calls;
    // The recovery has claimed (or asked to claim) and is waiting.
    for (let i = 0; i < 100 && store.calls < callsBefore + 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(store.calls).toBeGreaterThanOrEqual(callsBefore + 2);
    return { svc, store };
  }

  async function stopTakes(svc: SnowflakeService): Promise<number> {
    const started = Date.now();
    await svc.onApplicationShutdown();
    return Date.now() - started;
  }

  it('abandons the wait for a fresh id’s floor', async () => {
    const { svc, store } = await recovering((s) => {
      // The only free id was recorded 40 s ahead (within the allowance): the recovery waits past it.
      for (let id = 2; id <= 31; id++) {
        s.entries.set(id, { owner: `o${id}`, expires: Date.now() + TTL });
      }
      s.entries.set(1, { recorded: Date.now() + 40_000 });
    });
    expect(store.entries.get(1)?.owner).toBeDefined();
    expect(await stopTakes(svc)).toBeLessThan(5000);
    expect(svc.workerId).toBeNull();
  }, 20_000);

  it('abandons the wait a store asks for (leases lost: no claims for a TTL)', async () => {
    const { svc } = await recovering((s) => {
      s.since = Date.now() + TTL;
    });
    expect(await stopTakes(svc)).toBeLessThan(5000);
  }, 20_000);
});
