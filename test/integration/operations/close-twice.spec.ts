import { REDIS, RedisClient } from '../../../src/infra/redis/redis.tokens';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { startApp } from '../../support/test-env';

/**
 * An application closed twice (a test's own close and its suite's, or a shutdown signal during a
 * close) runs Nest's shutdown hooks twice. The Redis client is closed once: a second quit() would
 * reject ("Connection is closed."), and a disconnect() of the ended client would arm ioredis's 2 s
 * socket timer, which keeps the process (Jest) alive after the tests.
 */
describe('an application closed twice', () => {
  const suite = appSuite('closetwice');

  it('quits its Redis client once and never disconnects the ended client', async () => {
    const app = await startApp(suite.env.config());
    const redis = app.get<RedisClient>(REDIS);
    const quit = jest.spyOn(redis, 'quit');
    const disconnect = jest.spyOn(redis, 'disconnect');
    await app.close();
    // quit() resolves with the server's OK; the socket closes right after.
    await pollUntil('the Redis client to end', () => redis.status === 'end');
    await app.close();
    expect({ quits: quit.mock.calls.length, disconnects: disconnect.mock.calls.length, status: redis.status }).toEqual({
      quits: 1,
      disconnects: 0,
      status: 'end',
    });
  });
});
