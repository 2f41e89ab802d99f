import { loadConfig } from '../../../src/config/load-config';
import { backendLabel, failureWords } from '../../../src/infra/backend-words';

/** A backend failure in our words: the backend, the variable that sets it, and what is wrong. */
describe('backend words', () => {
  const wrongPass = Object.assign(new Error('WRONGPASS invalid username-password pair or user is disabled.'), { name: 'ReplyError' });

  it('names REDIS_URL for a refused password of a standalone Redis: its label already does', () => {
    const config = loadConfig({ REDIS_URL: 'redis://:nope@127.0.0.1:6379/0' });
    expect(`${backendLabel('redis', config)} ${failureWords(wrongPass, config)}`).toBe(
      'Redis at REDIS_URL (127.0.0.1:6379/0) refused the password (WRONGPASS)',
    );
  });

  it.each([
    [{ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'main' }, "Redis Sentinel at REDIS_SENTINELS (127.0.0.1:26379, master 'main')"],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' }, 'Redis Cluster at REDIS_CLUSTER_NODES (127.0.0.1:7000,127.0.0.1:7001)'],
  ])('says the password of %j comes from REDIS_URL, not the variable its label names', (env, label) => {
    const config = loadConfig({ REDIS_URL: 'redis://:nope@127.0.0.1:6379/0', ...env });
    expect(`${backendLabel('redis', config)} ${failureWords(wrongPass, config)}`).toBe(
      `${label} refused the password (WRONGPASS) (password from REDIS_URL)`,
    );
  });

  it('keeps the other words as they are', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' });
    expect(failureWords(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7000'), { code: 'ECONNREFUSED' }), config)).toBe(
      'refused the connection (nothing listens there)',
    );
  });

  it("words the pop connection's own failures: closed, backing off after a refusal, silent", () => {
    expect(failureWords(new Error('pop connection: connection closed'))).toBe('closed the connection');
    expect(failureWords(new Error('pop connection to Redis unavailable (connect ECONNREFUSED 127.0.0.1:6379)'))).toBe(
      'refused the connection (nothing listens there)',
    );
    expect(failureWords(new Error('pop connection: Redis did not answer within 500 ms'))).toBe('did not answer within 500 ms');
  });
});
