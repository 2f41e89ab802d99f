import { loadConfig } from '../../../src/config/load-config';
import { expectConfigError } from '../../support/config-assert';

describe('loadConfig', () => {
  it('has working defaults for a developer machine', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(8080);
    expect(c.database).toMatchObject({ host: '127.0.0.1', port: 3306, database: 'shardleaf', migrationsRun: true });
    expect(c.redis).toMatchObject({ url: 'redis://127.0.0.1:6379/0', keyPrefix: 'id.gen.' });
    expect(c.admin.token).toBeUndefined();
    expect(c.queue.refillCron).toBe('0 */2 * * * *');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'postgres://x@y/z'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://localhost'],
    ['QUEUE_REFILL_CRON', 'every two minutes'],
    ['QUEUE_RELOAD_CRON', '*/2 * * * *'],
    ['QUEUE_LOCK_TTL_MS', '5'],
    ['QUEUE_IDLE_RATIO', '2'],
    ['DB_MIGRATIONS_RUN', 'maybe'],
    ['ADMIN_TOKEN', 'short'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    expectConfigError(name, value);
  });

  it('turns schedules off with "off" and parses the database URL', () => {
    const c = loadConfig({
      QUEUE_REFILL_CRON: 'off',
      DATABASE_URL: 'mysql://u:p%40ss@db.example:3307/ids',
    });
    expect(c.queue.refillCron).toBeNull();
    expect(c.database).toMatchObject({ host: 'db.example', port: 3307, user: 'u', password: 'p@ss', database: 'ids' });
  });
});
