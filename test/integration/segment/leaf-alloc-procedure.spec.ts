import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { LeafAllocHistoryWriter } from '../../../src/segment/history/leaf-alloc-history.writer';
import { LeafAllocProcedure } from '../../../src/segment/history/leaf-alloc-procedure';
import { LeafAllocLeaseRepository } from '../../../src/segment/leaf-alloc-lease.repository';
import { LeafAllocEntity } from '../../../src/segment/leaf-alloc.entity';
import { LeafAllocRepository } from '../../../src/segment/leaf-alloc.repository';
import { TestEnv, createTestEnv, testMysqlOptions } from '../../support/test-env';
import { LEAF_DDL } from './segment-test-helpers';

/**
 * Segment fetches and leases through `shardleaf_leaf_alloc_next` (migration 1763771300000): one
 * round trip, the same ranges and history rows as the statement-by-statement transactions they
 * fall back to, and only the tag's own row locked (also on a table made by Leaf's utf8 DDL).
 */
describe('shardleaf_leaf_alloc_next (segment fetches and leases in one round trip)', () => {
  let env: TestEnv;
  let dataSource: DataSource;

  const repos = (): { fetch: LeafAllocRepository; lease: LeafAllocLeaseRepository } => {
    const writer = new LeafAllocHistoryWriter();
    const procedure = new LeafAllocProcedure(dataSource);
    return { fetch: new LeafAllocRepository(dataSource, writer, procedure), lease: new LeafAllocLeaseRepository(dataSource, writer, procedure) };
  };

  async function history(tag: string): Promise<string[]> {
    const rows = (await env.sql('SELECT from_id, to_id FROM leaf_alloc_history WHERE biz_tag = ? ORDER BY to_id', [tag])) as Array<{
      from_id: string;
      to_id: string;
    }>;
    return rows.map((r) => `${r.from_id}..${r.to_id}`);
  }

  /** Fetches, a dynamic-step fetch and leases on tag `tag` (step 10, max_id 1); what each returned. */
  async function run(tag: string): Promise<unknown[]> {
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, 1, 10, 'p')", [tag]);
    const { fetch, lease } = repos();
    return [
      await fetch.updateMaxIdAndGetLeafAlloc(tag),
      await fetch.updateMaxIdByCustomStepAndGetLeafAlloc(tag, 25),
      await fetch.updateMaxIdByCustomStepAndGetLeafAlloc(tag, 3),
      await lease.advance(tag, 7),
      await fetch.updateMaxIdAndGetLeafAlloc(`${tag}-none`),
      await lease.advance(`${tag}-none`, 7),
    ];
  }

  beforeAll(async () => {
    env = await createTestEnv('leafproc');
    // Leaf's own DDL first, in utf8 (utf8mb3: a Leaf database's default often is), not this
    // database's utf8mb4; then the migrations around it.
    await env.sql(LEAF_DDL.replace('ENGINE=InnoDB;', 'ENGINE=InnoDB DEFAULT CHARSET=utf8;'));
    dataSource = new DataSource({ ...typeormOptions(env.config().database), entities: [LeafAllocEntity] });
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
    await env.cleanup();
  });

  it('a fetch or a lease is one CALL, no transaction sent statement by statement', async () => {
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('one', 1, 10, 'p')");
    const { fetch, lease } = repos();
    const query = jest.spyOn(dataSource, 'query');
    const transaction = jest.spyOn(dataSource, 'transaction');
    try {
      expect(await fetch.updateMaxIdAndGetLeafAlloc('one')).toEqual({ key: 'one', maxId: 11n, step: 10 });
      expect(await lease.advance('one', 5)).toBe(16n);
      expect(query.mock.calls.map((c) => String(c[0]))).toEqual(['CALL shardleaf_leaf_alloc_next(?, ?, ?)', 'CALL shardleaf_leaf_alloc_next(?, ?, ?)']);
      expect(transaction).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
      transaction.mockRestore();
    }
    expect(await history('one')).toEqual(['1..10', '11..15']);
  });

  it('the procedure and the transactions it falls back to: the same results and history rows', async () => {
    const byProcedure = await run('p');
    const lease = repos().lease;
    expect(await lease.advance('p', 1)).toBe(54n);
    await env.sql('UPDATE leaf_alloc SET max_id = 0 WHERE biz_tag = ?', ['p']);
    expect(await lease.advance('p', 1)).toEqual({ belowOne: 0n });

    await env.sql('DROP PROCEDURE shardleaf_leaf_alloc_next');
    try {
      const byTransaction = await run('t');
      expect(byTransaction).toEqual(byProcedure.map((r) => (r !== null && typeof r === 'object' && 'key' in r ? { ...r, key: 't' } : r)));
      expect(await history('t')).toEqual(await history('p').then((h) => h.slice(0, -1)));
    } finally {
      await dataSource.undoLastMigration();
      await dataSource.runMigrations();
    }
    expect(byProcedure).toEqual([
      { key: 'p', maxId: 11n, step: 10 },
      { key: 'p', maxId: 36n, step: 10 },
      { key: 'p', maxId: 46n, step: 10 },
      53n,
      null,
      null,
    ]);
    expect(await history('p')).toEqual(['1..10', '11..35', '36..45', '46..52', '53..53']);
  });

  it('a missing procedure is looked for again a minute later, not given up for good', async () => {
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('again', 1, 10, 'p')");
    const { fetch } = repos();
    await env.sql('DROP PROCEDURE shardleaf_leaf_alloc_next');
    expect(await fetch.updateMaxIdAndGetLeafAlloc('again')).toMatchObject({ maxId: 11n });
    await dataSource.undoLastMigration();
    await dataSource.runMigrations();
    const query = jest.spyOn(dataSource, 'query');
    const calls = (): string[] => query.mock.calls.map((c) => String(c[0])).filter((sql) => sql.startsWith('CALL'));
    try {
      expect(await fetch.updateMaxIdAndGetLeafAlloc('again')).toMatchObject({ maxId: 21n });
      expect(calls()).toEqual([]);
      const now = performance.now();
      jest.spyOn(performance, 'now').mockReturnValue(now + 61_000);
      expect(await fetch.updateMaxIdAndGetLeafAlloc('again')).toMatchObject({ maxId: 31n });
      expect(calls()).toEqual(['CALL shardleaf_leaf_alloc_next(?, ?, ?)']);
    } finally {
      jest.restoreAllMocks();
    }
    expect(await history('again')).toEqual(['1..10', '11..20', '21..30']);
  });

  it("locks only the tag's own row (the parameter has biz_tag's character set: Leaf's utf8 here)", async () => {
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('held', 1, 10, 'p'), ('free', 1, 10, 'p')");
    const conn = await createConnection(testMysqlOptions(env.database));
    await conn.beginTransaction();
    await conn.query("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'held' FOR UPDATE");
    try {
      const fetched = await Promise.race([
        repos().fetch.updateMaxIdAndGetLeafAlloc('free'),
        new Promise((resolve) => setTimeout(() => resolve('blocked'), 3000)),
      ]);
      expect(fetched).toMatchObject({ key: 'free', maxId: 11n });
    } finally {
      await conn.commit();
      await conn.end();
    }
  });

  it('a tag that is not ASCII takes the transaction (and works)', async () => {
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('订单', 1, 10, 'p')");
    expect(await repos().fetch.updateMaxIdAndGetLeafAlloc('订单')).toEqual({ key: '订单', maxId: 11n, step: 10 });
    expect(await history('订单')).toEqual(['1..10']);
  });
});
