import { Logger } from '@nestjs/common';
import { LockService } from '../../../src/infra/redis/lock.service';
import { createRedisClient } from '../../../src/infra/redis/redis-client.factory';
import { RedisClient } from '../../../src/infra/redis/redis.tokens';
import { pollUntil } from '../../support/poll';
import { OwnRedisServer } from '../../support/redis-server';

/**
 * A refill lock taken or released while Redis is frozen (SIGSTOP): the command times out, yet the
 * frozen server runs it when it resumes. Such a lock stood for its whole TTL with nobody to
 * release it, and every refill of its shard reported "busy" meanwhile. The lock's value is kept and
 * released again once a connection is ready; the request that failed never waits for that.
 */
describe('a refill lock on a frozen Redis', () => {
  let redis: OwnRedisServer;
  let client: RedisClient;
  let admin: RedisClient;
  let locks: LockService;
  const TTL_MS = 60_000;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    redis = await OwnRedisServer.start();
    const config = { url: redis.url, keyPrefix: 'lk.', commandTimeoutMs: 500, topology: { kind: 'standalone' as const } };
    client = createRedisClient(config);
    admin = createRedisClient({ ...config, commandTimeoutMs: 5000 });
    locks = new LockService(client);
    // Redis knows the lock scripts from here on (EVALSHA runs them, as on a server in service).
    expect(await locks.withLock('lock_warm', { ttlMs: TTL_MS }, async () => 'ok')).toEqual({ acquired: true, value: 'ok' });
  });

  afterAll(async () => {
    redis.thaw();
    client.disconnect();
    admin.disconnect();
    await redis.destroy();
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
  });

  async function thawAndWaitForReady(): Promise<void> {
    const ready = new Promise((resolve) => client.once('ready', resolve));
    redis.thaw();
    await ready;
  }

  it('an attempt that timed out does not leave the lock standing once Redis resumes', async () => {
    redis.freeze();
    let ran = false;
    await expect(
      locks.withLock('lock_1_0', { ttlMs: TTL_MS }, async () => {
        ran = true;
      }),
    ).rejects.toThrow();
    expect(ran).toBe(false);
    await thawAndWaitForReady();
    // The frozen server ran the attempt when it resumed; the lock is released again.
    await pollUntil('the lock key to be gone', async () => (await admin.exists('lock_1_0')) === 0, { timeoutMs: 5000 });
    const outcome = await locks.withLock('lock_1_0', { ttlMs: TTL_MS }, async () => 'refilled');
    expect(outcome).toEqual({ acquired: true, value: 'refilled' });
  });

  it('a lock whose release failed (its refill failed on the frozen Redis) is released once Redis resumes', async () => {
    const outcome = locks.withLock('lock_1_1', { ttlMs: TTL_MS }, async () => {
      redis.freeze();
      // The refill's next command times out: its connection is dropped, the release cannot be sent.
      await client.get('anything');
      return 'never';
    });
    await expect(outcome).rejects.toThrow(/did not answer within 500 ms/);
    await thawAndWaitForReady();
    await pollUntil('the lock key to be gone', async () => (await admin.exists('lock_1_1')) === 0, { timeoutMs: 5000 });
  });

  it('a lock held elsewhere is busy; a free one is taken and released', async () => {
    await admin.set('lock_1_2', 'someone-else', 'PX', TTL_MS);
    expect(await locks.withLock('lock_1_2', { ttlMs: TTL_MS, retryCount: 2, retryDelayMs: 10 }, async () => 'never')).toEqual({ acquired: false });
    expect(await admin.get('lock_1_2')).toBe('someone-else');
    expect(await locks.withLock('lock_1_3', { ttlMs: TTL_MS }, async () => admin.pttl('lock_1_3'))).toMatchObject({ acquired: true });
    expect(await admin.exists('lock_1_3')).toBe(0);
  });
});
