import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { NumberSequenceRepository } from '../../../src/numbers/number-sequence.repository';
import { TestEnv, createTestEnv, testMysqlOptions } from '../../support/test-env';

/**
 * NumberSequenceRepository.allocate on the real database: the range it returns is what its own
 * row update moved, whatever else writes `number_seq` (an operator raising a sequence by hand while
 * an allocation waits for the row): uniqueness rests on the row update, not on reads.
 */
describe('NumberSequenceRepository.allocate', () => {
  let env: TestEnv;
  let dataSource: DataSource;
  let repo: NumberSequenceRepository;

  beforeAll(async () => {
    env = await createTestEnv('numseq');
    const config = env.config();
    dataSource = new DataSource({ ...typeormOptions(config.database), entities: [] });
    await dataSource.initialize();
    await dataSource.runMigrations();
    repo = new NumberSequenceRepository(dataSource, config.numbers);
  });

  afterAll(async () => {
    await dataSource.destroy();
    await env.cleanup();
  });

  async function maxSeq(key: string): Promise<string> {
    const rows = (await env.sql('SELECT max_seq FROM number_seq WHERE fmt_key = ?', [key])) as Array<{ max_seq: string }>;
    return String(rows[0].max_seq);
  }

  /** Waits until a statement on number_seq of this suite's account has run for 200 ms (it waits for a row lock). */
  async function untilLockWait(): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const rows = (await env.sql(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND COMMAND = 'Query' " +
          "AND INFO LIKE '%number_seq%' AND INFO NOT LIKE '%PROCESSLIST%' AND TIME_MS > 200",
      )) as Array<{ n: number | string }>;
      if (Number(rows[0].n) > 0) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('no statement waited for the row lock');
  }

  it('a sequence raised by hand while an allocation waits for its row: the allocation continues above it', async () => {
    await env.sql("INSERT INTO number_format (fmt_key, pattern, reset_period, step) VALUES ('hand', 'H{seq:6}', 'none', 10)");
    expect(await repo.allocate('hand', { wanted: 1, exact: false })).toMatchObject({ kind: 'allocated', from: 1n, to: 10n });
    const conn = await createConnection(testMysqlOptions(env.database));
    try {
      await conn.beginTransaction();
      await conn.query("UPDATE number_seq SET max_seq = max_seq + 1000 WHERE fmt_key = 'hand'");
      const allocation = repo.allocate('hand', { wanted: 1, exact: false });
      await untilLockWait();
      await conn.commit();
      expect(await allocation).toMatchObject({ kind: 'allocated', from: 1011n, to: 1020n });
    } finally {
      await conn.end();
    }
    expect(await maxSeq('hand')).toBe('1020');
  });

  it('a sequence raised by hand close to the capacity meanwhile: the allocation fails (503), never passes the capacity', async () => {
    await env.sql("INSERT INTO number_format (fmt_key, pattern, reset_period, step) VALUES ('near', 'N{seq:3}', 'none', 6)");
    expect(await repo.allocate('near', { wanted: 1, exact: false })).toMatchObject({ kind: 'allocated', from: 1n, to: 6n });
    const conn = await createConnection(testMysqlOptions(env.database));
    try {
      await conn.beginTransaction();
      await conn.query("UPDATE number_seq SET max_seq = 997 WHERE fmt_key = 'near'");
      const allocation = repo.allocate('near', { wanted: 1, exact: false }).then(
        () => 'allocated',
        (err: unknown) => (err as IdGenError).kind,
      );
      await untilLockWait();
      await conn.commit();
      expect(await allocation).toBe(ErrorKind.BackendUnavailable);
    } finally {
      await conn.end();
    }
    expect(await maxSeq('near')).toBe('997');
    expect(await repo.allocate('near', { wanted: 1, exact: false })).toMatchObject({ kind: 'allocated', from: 998n, to: 999n });
  });

  it('a new period starts at 1; the capacity caps the last range; then exhausted, nothing written', async () => {
    await env.sql("INSERT INTO number_format (fmt_key, pattern, reset_period, step) VALUES ('cap', 'C{seq:3}', 'none', 6)");
    const ranges: string[] = [];
    for (;;) {
      const a = await repo.allocate('cap', { wanted: 1, exact: false });
      if (a.kind !== 'allocated') {
        expect(a.kind).toBe('exhausted');
        break;
      }
      ranges.push(`${a.from}..${a.to}`);
    }
    // 1 % of 999 is 9: the step 6 fits; the last range is cut at 999.
    expect(ranges[0]).toBe('1..6');
    expect(ranges.at(-1)).toBe('997..999');
    expect(ranges).toHaveLength(167);
    expect(await maxSeq('cap')).toBe('999');
  });

  it('concurrent allocations of one key on two pools: disjoint ranges that cover 1..n', async () => {
    await env.sql("INSERT INTO number_format (fmt_key, pattern, reset_period, step) VALUES ('par', 'P{seq:8}', 'none', 7)");
    const other = new DataSource({ ...typeormOptions(env.config().database), entities: [] });
    await other.initialize();
    try {
      const repo2 = new NumberSequenceRepository(other, env.config().numbers);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? repo : repo2).allocate('par', { wanted: 1 + (i % 3) * 5, exact: i % 4 === 0 })),
      );
      const ranges = results.map((r) => (r.kind === 'allocated' ? [r.from, r.to] : [0n, -1n])).sort((x, y) => (x[0] < y[0] ? -1 : 1));
      let next = 1n;
      for (const [from, to] of ranges) {
        expect(from).toBe(next);
        next = to + 1n;
      }
    } finally {
      await other.destroy();
    }
  });
});
