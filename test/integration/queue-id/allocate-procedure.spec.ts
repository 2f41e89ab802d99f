import { DataSource } from 'typeorm';
import { typeormOptions } from '../../../src/infra/database/typeorm-options';
import { lowBits, maxIndexFor } from '../../../src/queue-id/core/queue-id-layout';
import { planSegment } from '../../../src/queue-id/core/refill-policy';
import { IdAllocEntity } from '../../../src/queue-id/id-alloc.entity';
import { IdAllocRepository } from '../../../src/queue-id/id-alloc.repository';
import { TestEnv, createTestEnv } from '../../support/test-env';

/**
 * IdAllocRepository.allocate: the one-round-trip stored procedure (migration 1763770500000) and
 * the four-statement fallback for databases without it give the same segments as planSegment.
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

  it('falls back to the transaction when the procedure is missing', async () => {
    await env.sql('DROP PROCEDURE shardleaf_id_alloc_next');
    await expectSequence(new IdAllocRepository(dataSource), 12, 63);
  });

  it('keeps concurrent allocations disjoint', async () => {
    const repo = new IdAllocRepository(dataSource);
    await repo.createApp({ appId: 13, appName: 'p13', step: 7, maxLimitId: 0n, description: null }, 64);
    const results = await Promise.all(Array.from({ length: 20 }, () => repo.allocate(13, 5, 1)));
    const froms = results.map((r) => r?.segment?.from ?? -1n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(froms).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i * 7 + 1)));
  });
});
