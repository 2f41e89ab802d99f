import Redis from 'ioredis';
import { checkMysql, checkRedis } from '../../../src/infra/backend-start-check';
import { BlackHoleProxy, isMysqlCommand } from '../../support/black-hole-proxy';
import { appSuite } from '../../support/app-suite';
import { freePort } from '../../support/free-port';
import { pollUntil } from '../../support/poll';
import { TEST_MYSQL_URL, TEST_REDIS_URL } from '../../support/test-env';

/**
 * The start's check of MySQL and Redis (infra/backend-start-check.ts) leaves nothing open behind
 * it: a refused Redis is not disconnected again (that would arm ioredis's 2 s timer on a socket
 * already gone), and a server that accepted the connection and then answers nothing (frozen,
 * black-holed) has its connection closed when the check gives up, its socket included.
 */
const CHECK_MS = 500;

describe('the start check of the backends', () => {
  const suite = appSuite('startcheck');
  const configWith = (overrides: Record<string, string>) => suite.env.config(overrides);
  const proxies: BlackHoleProxy[] = [];
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  it('passes against the shared servers', async () => {
    const config = configWith({});
    await expect(checkMysql(config.database, 4000)).resolves.toBeUndefined();
    await expect(checkRedis(config.redis, 4000)).resolves.toBeUndefined();
  });

  it('does not disconnect a Redis client that a refused connection already ended', async () => {
    const disconnect = jest.spyOn(Redis.prototype, 'disconnect');
    const port = await freePort();
    const config = configWith({ REDIS_URL: `redis://127.0.0.1:${port}/0` });
    await expect(checkRedis(config.redis, 4000)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(disconnect).not.toHaveBeenCalled();
  });

  it('closes the MySQL connection, socket included, when the server accepted the login and then answers nothing', async () => {
    const server = new URL(TEST_MYSQL_URL);
    // The handshake passes; SELECT 1 (the first command) and everything after it are held.
    const proxy = await BlackHoleProxy.start(Number(server.port || 3306), { targetHost: server.hostname, holdFrom: isMysqlCommand });
    proxies.push(proxy);
    const url = new URL(suite.env.env.DATABASE_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    const config = configWith({ DATABASE_URL: url.toString() });
    const err: unknown = await checkMysql(config.database, CHECK_MS).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/did not answer within/);
    await pollUntil(() => `the check's MySQL socket to be closed (${proxy.clientSocketsHeld()} held)`, () => proxy.clientSocketsHeld() === 0, {
      timeoutMs: 10_000,
    });
  });

  it('closes the Redis connection when the server accepted it and then answers nothing', async () => {
    const proxy = await BlackHoleProxy.start(Number(new URL(TEST_REDIS_URL).port || 6379), { holdFrom: () => true });
    proxies.push(proxy);
    const config = configWith({ REDIS_URL: `redis://127.0.0.1:${proxy.port}/0` });
    const err: unknown = await checkRedis(config.redis, CHECK_MS).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/did not answer within/);
    // ioredis half-closes, then destroys the socket after its own 2 s at most.
    await pollUntil(() => `the check's Redis socket to be closed (${proxy.clientSocketsHeld()} held)`, () => proxy.clientSocketsHeld() === 0, {
      timeoutMs: 10_000,
    });
  });
});
