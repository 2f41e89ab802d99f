import { DataSource } from 'typeorm';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { NumberFormatRepository } from '../../../src/numbers/number-format.repository';
import { TestEnv, createTestEnv } from '../../support/test-env';

/**
 * The admin API's times of number formats (createTime, updateTime, a tombstone's deletedAt) are
 * UTC, written with UTC_TIMESTAMP(), whatever the time zone of the database session that wrote
 * them: here every pooled connection runs in +08:00 (as after a SET GLOBAL time_zone).
 */
describe('number formats: times written in UTC', () => {
  let env: TestEnv;
  let dataSource: DataSource;
  let repo: NumberFormatRepository;

  beforeAll(async () => {
    env = await createTestEnv('numtimes');
    const config = env.config();
    dataSource = new DataSource({ ...typeormOptions(config.database), entities: [] });
    await dataSource.initialize();
    await dataSource.runMigrations();
    // Every connection of the pool, new or reused, in +08:00 before its first statement.
    const pool = (dataSource.driver as unknown as { pool: { on(event: string, listener: (conn: { query(sql: string): void }) => void): void } }).pool;
    pool.on('connection', (conn) => conn.query("SET time_zone = '+08:00'"));
    await dataSource.query("SET time_zone = '+08:00'");
    repo = new NumberFormatRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource.destroy();
    await env.cleanup();
  });

  const nearNow = (t: Date): boolean => Math.abs(t.getTime() - Date.now()) < 120_000;

  it('createTime, updateTime and deletedAt are within minutes of now (UTC), not 8 hours off', async () => {
    const [{ tz }] = await dataSource.query<Array<{ tz: string }>>('SELECT @@session.time_zone AS tz');
    expect(tz).toBe('+08:00');
    expect(await repo.create({ key: 'utc', pattern: 'U{seq:4}', reset: 'none', step: 10, description: null })).toEqual({
      kind: 'created',
      resumed: false,
    });
    const created = await repo.find('utc');
    expect([nearNow(created!.createTime), nearNow(created!.updateTime)]).toEqual([true, true]);
    await repo.update('utc', { step: 20 });
    expect(nearNow((await repo.find('utc'))!.updateTime)).toBe(true);
    expect(await repo.delete('utc')).toBe(true);
    expect(nearNow((await repo.retired('utc'))!.deletedAt)).toBe(true);
  });
});
