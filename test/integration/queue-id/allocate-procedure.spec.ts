import { DataSource } from 'typeorm';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { INDEX_SHIFT, MAX_INDEX, MAX_SIGNED_64, lowBits, maxIndexFor } from '../../../src/queue-id/core/queue-id-layout';
import { SegmentPlan, firstIndexAfter, planSegment } from '../../../src/queue-id/core/refill-policy';
import { IdAllocEntity } from '../../../src/queue-id/id-alloc.entity';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { seededRandom } from '../../support/seeded-random';
import { TestEnv, createTestEnv } from '../../support/test-env';

/** One allocation to check: the row as it stands (max_id, step, max_limit_id) and the indexes wanted. */
interface AllocCase {
  appId: number;
  shardId: number;
  maxId: bigint;
  step: number;
  maxLimitId: bigint;
  wanted: number;
}

/** The shards the cases run on: the lowest and highest low bits, and one between. */
const SHARDS: ReadonlyArray<readonly [number, number]> = [
  [0, 0],
  [200, 31],
  [255, 63],
];
const STEPS_AND_WANTED: ReadonlyArray<readonly [number, number]> = [
  [1, 0],
  [1, 5],
  [7, 7],
  [7, 8],
  [7, 22],
  [1000, 2500],
  [2_147_483_647, 1],
  [3, 10_000_000],
];

/**
 * The limit edges of a shard (no limit, a negative limit, below its low bits, exactly on them, on
 * and around index 1, the top of the index range and past it) crossed with max_id at and around
 * the index bound each implies (whole steps short of it, on it, past it, negative), for every
 * step and number wanted above.
 */
function edgeCases(): AllocCase[] {
  const cases: AllocCase[] = [];
  for (const [appId, shardId] of SHARDS) {
    const low = lowBits(appId, shardId);
    const at = (index: bigint) => (index << INDEX_SHIFT) | low;
    const limits = [0n, -1n, low - 1n, low, at(1n) - 1n, at(1n) + 16_383n - low, at(1000n), at(MAX_INDEX), MAX_SIGNED_64];
    for (const maxLimitId of limits) {
      const bound = maxIndexFor(appId, shardId, maxLimitId);
      for (const [step, wanted] of STEPS_AND_WANTED) {
        const s = BigInt(step);
        for (const maxId of [bound - 2n * s, bound - s, bound - s + 1n, bound - 1n, bound, bound + 1n, -3n, 0n]) {
          cases.push({ appId, shardId, maxId, step, maxLimitId, wanted });
        }
      }
    }
  }
  return cases;
}

function range(segment: SegmentPlan | null): string {
  return segment === null ? 'nothing' : `${segment.from}..${segment.to}`;
}

/** Random rows and requests around the limit (seeded: a failure names its case and repeats). */
function randomCases(count: number, seed: number): AllocCase[] {
  const random = seededRandom(seed);
  const int = (below: number) => Math.floor(random() * below);
  const cases: AllocCase[] = [];
  for (let i = 0; i < count; i++) {
    const [appId, shardId] = SHARDS[i % SHARDS.length];
    const step = random() < 0.2 ? 1 : 1 + int(5000);
    const limitIndex = BigInt(int(1 << 20));
    const maxLimitId = random() < 0.2 ? 0n : (limitIndex << INDEX_SHIFT) + lowBits(appId, shardId) + BigInt(int(1 << 14) - (1 << 13));
    const bound = maxIndexFor(appId, shardId, maxLimitId);
    const maxId = bound - BigInt(int(4 * step)) + 1n;
    cases.push({ appId, shardId, maxId, step, maxLimitId, wanted: int(5 * step) });
  }
  return cases;
}

/**
 * IdAllocRepository.allocate: the one-round-trip stored procedure (migration 1763770500000) and
 * the four-statement fallback for databases without it give the same segments as planSegment,
 * the one TypeScript definition of the rule; the procedure is also run on ~2,000 generated rows.
 */
describe('IdAllocRepository.allocate (stored procedure and fallback)', () => {
  let env: TestEnv;
  let dataSource: DataSource;

  beforeAll(async () => {
    env = await createTestEnv('allocproc');
    dataSource = new DataSource({ ...typeormOptions(env.config().database), entities: [IdAllocEntity] });
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterAll(async () => {
    await dataSource.destroy();
    await env.cleanup();
  });

  async function expectSequence(repo: IdAllocRepository, appId: number, shardId: number): Promise<void> {
    // step 10, and a limit that leaves this shard indexes 1..25.
    const maxLimitId = (25n << 14n) | lowBits(appId, shardId);
    await repo.createApp({ appId, appName: `p${appId}`, step: 10, maxLimitId, description: null }, 64);
    const maxIndex = maxIndexFor(appId, shardId, maxLimitId);
    let maxId = 0n;
    for (const minWanted of [1, 15, 1, 1]) {
      const result = await repo.allocate(appId, shardId, minWanted);
      const expected = planSegment(maxId, 10, maxIndex, minWanted);
      expect(result).toEqual({ segment: expected, step: 10, maxIndex, maxLimitId });
      maxId = expected?.to ?? maxId;
    }
    // 1..10, 11..25 (two steps, capped by the limit), then nothing left.
    expect(maxId).toBe(25n);
    const rows = (await env.sql('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [appId, shardId])) as Array<{
      max_id: string;
    }>;
    expect(rows[0].max_id).toBe('25');
    expect(await repo.allocate(appId + 100, shardId, 1)).toBeNull();
  }

  it('allocates through the procedure', async () => {
    await expectSequence(new IdAllocRepository(dataSource), 11, 3);
  });

  /** One CALL with the parameters IdAllocRepository.allocate passes; the range it committed. */
  async function callProcedure(c: AllocCase): Promise<SegmentPlan | null> {
    // mysql2 answers a CALL with [rows of the SELECT, the CALL's OK packet].
    const result = await dataSource.query<[Array<{ found: number; old_max_id: string; new_max_id: string | null }>, unknown]>(
      'CALL shardleaf_id_alloc_next(?, ?, ?, ?, ?, ?)',
      [
        c.appId,
        c.shardId,
        c.wanted,
        lowBits(c.appId, c.shardId).toString(),
        (1n << INDEX_SHIFT).toString(),
        MAX_INDEX.toString(),
      ],
    );
    const row = result[0][0];
    expect({ found: Number(row.found), old: BigInt(row.old_max_id) }).toEqual({ found: 1, old: c.maxId });
    return row.new_max_id === null ? null : { from: firstIndexAfter(c.maxId), to: BigInt(row.new_max_id) };
  }

  it('gives planSegment\'s range, and stores its end, on every generated case (limit edges and exhaustion)', async () => {
    const repo = new IdAllocRepository(dataSource);
    for (const [appId] of SHARDS) {
      await repo.createApp({ appId, appName: `rule${appId}`, step: 1, maxLimitId: 0n, description: null }, 64);
    }
    const cases = [...edgeCases(), ...randomCases(300, 12)];
    const mismatches: string[] = [];
    let exhausted = 0;
    for (const c of cases) {
      await dataSource.query('UPDATE id_alloc SET max_id = ?, step = ?, max_limit_id = ? WHERE app_id = ? AND shard_id = ?', [
        c.maxId.toString(),
        c.step,
        c.maxLimitId.toString(),
        c.appId,
        c.shardId,
      ]);
      const expected = planSegment(c.maxId, c.step, maxIndexFor(c.appId, c.shardId, c.maxLimitId), c.wanted);
      const got = await callProcedure(c);
      const rows: Array<{ max_id: string }> = await dataSource.query('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ?', [
        c.appId,
        c.shardId,
      ]);
      const stored = BigInt(rows[0].max_id);
      if (got?.from !== expected?.from || got?.to !== expected?.to || stored !== (expected?.to ?? c.maxId)) {
        const row = `app ${c.appId} shard ${c.shardId} max_id ${c.maxId} step ${c.step} max_limit_id ${c.maxLimitId} wanted ${c.wanted}`;
        mismatches.push(`${row}: procedure ${range(got)} (stored ${stored}), planSegment ${range(expected)}`);
      }
      exhausted += expected === null ? 1 : 0;
    }
    expect(mismatches).toEqual([]);
    // Both outcomes were exercised, on many cases each.
    expect(exhausted).toBeGreaterThan(100);
    expect(cases.length - exhausted).toBeGreaterThan(100);
  });

  it('falls back to the transaction when the procedure is missing (the range recorded in id_alloc_history too), and tries it again a minute later', async () => {
    await env.sql('DROP PROCEDURE shardleaf_id_alloc_next');
    const repo = new IdAllocRepository(dataSource);
    await expectSequence(repo, 12, 63);
    const history = (await env.sql(
      'SELECT from_index, to_index FROM id_alloc_history WHERE app_id = 12 AND shard_id = 63 ORDER BY to_index',
    )) as Array<{ from_index: string; to_index: string }>;
    expect(history.map((h) => `${h.from_index}..${h.to_index}`)).toEqual(['1..10', '11..25']);

    // The migration defines it again (a DROP then CREATE seen in between, on MySQL).
    await dataSource.query("DELETE FROM shardleaf_migrations WHERE name = 'CreateIdAllocHistory1763771000000'");
    await dataSource.runMigrations();
    await repo.createApp({ appId: 14, appName: 'p14', step: 5, maxLimitId: 0n, description: null }, 64);
    const query = jest.spyOn(dataSource, 'query');
    const calls = (): number => query.mock.calls.filter((c) => String(c[0]).startsWith('CALL')).length;
    try {
      expect((await repo.allocate(14, 1, 1))?.segment).toEqual({ from: 1n, to: 5n });
      expect(calls()).toBe(0);
      const now = performance.now();
      jest.spyOn(performance, 'now').mockReturnValue(now + 61_000);
      expect((await repo.allocate(14, 1, 1))?.segment).toEqual({ from: 6n, to: 10n });
      expect(calls()).toBe(1);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('keeps concurrent allocations disjoint', async () => {
    const repo = new IdAllocRepository(dataSource);
    await repo.createApp({ appId: 13, appName: 'p13', step: 7, maxLimitId: 0n, description: null }, 64);
    const results = await Promise.all(Array.from({ length: 20 }, () => repo.allocate(13, 5, 1)));
    const froms = results.map((r) => r?.segment?.from ?? -1n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(froms).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i * 7 + 1)));
  });
});
