/**
 * The size of the allocation history (docs/id-history.md): fills `id_alloc_history` and
 * `leaf_alloc_history`, created by their own migrations, with HISTORY_ROWS rows each shaped as
 * production writes them (one allocation every 100 ms, round robin over 256 apps × 64 shards or
 * 100 tags, ranges of 1000), then reads InnoDB's sizes (data and indexes, after ANALYZE TABLE) and
 * prints bytes per row and what 10 allocations per second come to per day, per 90 days (the
 * default retention) and per year.
 *
 *   node -r ts-node/register/transpile-only scripts/bench/history-size.ts
 *
 * Env: BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306; must create databases),
 * HISTORY_ROWS (default 1000000). Uses a database of its own, dropped at the end.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { CreateIdAllocHistory1763771000000 } from '../../migrations/1763771000000-create-id-alloc-history';
import { CreateLeafAllocHistory1763771100000 } from '../../migrations/1763771100000-create-leaf-alloc-history';
import { CreateIdAllocNextProcedure1763770500000 } from '../../migrations/1763770500000-create-id-alloc-next-procedure';

const ROWS = Number(process.env.HISTORY_ROWS ?? '1000000');
const RATE_PER_S = 10;
const BATCH = 5000;

async function main(): Promise<void> {
  const url = new URL((process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, ''));
  const database = `shardleaf_history_size_${process.pid}`;
  const account = {
    type: 'mysql' as const,
    host: url.hostname,
    port: Number(url.port || 3306),
    username: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
  };
  const server = new DataSource(account);
  await server.initialize();
  await server.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
  const db = new DataSource({
    ...account,
    database,
    migrations: [CreateIdAllocNextProcedure1763770500000, CreateIdAllocHistory1763771000000, CreateLeafAllocHistory1763771100000],
    migrationsTableName: 'shardleaf_migrations',
  });
  try {
    await db.initialize();
    await db.runMigrations();
    const start = Date.UTC(2026, 0, 1);
    await fill(db, 'id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at)', (i) => {
      const shard = i % (256 * 64);
      const k = Math.floor(i / (256 * 64));
      return [shard >> 6, shard & 63, k * 1000 + 1, (k + 1) * 1000, at(start, i)];
    });
    await fill(db, 'leaf_alloc_history (biz_tag, from_id, to_id, allocated_at)', (i) => {
      const k = Math.floor(i / 100);
      return [`tag-${String(i % 100).padStart(3, '0')}`, k * 1000 + 1, (k + 1) * 1000, at(start, i)];
    });
    console.log(`allocation history size: ${ROWS} rows per table, one allocation every ${1000 / RATE_PER_S} ms`);
    console.log('table               data B/row  index B/row  total B/row  per day (10/s)  90 days     a year');
    for (const table of ['id_alloc_history', 'leaf_alloc_history']) {
      await db.query(`ANALYZE TABLE ${table}`);
      const [size] = await db.query<Array<{ data: string; idx: string }>>(
        'SELECT DATA_LENGTH AS data, INDEX_LENGTH AS idx FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
        [database, table],
      );
      const dataPerRow = Number(size.data) / ROWS;
      const indexPerRow = Number(size.idx) / ROWS;
      const perRow = dataPerRow + indexPerRow;
      const perDay = perRow * RATE_PER_S * 86_400;
      console.log(
        `${table.padEnd(20)}${dataPerRow.toFixed(0).padStart(11)}${indexPerRow.toFixed(0).padStart(13)}${perRow.toFixed(0).padStart(13)}` +
          `${gb(perDay).padStart(16)}${gb(perDay * 90).padStart(10)}${gb(perDay * 365).padStart(11)}`,
      );
    }
    console.log(`rows at 10 allocations/s: ${RATE_PER_S * 86_400} a day, ${RATE_PER_S * 86_400 * 90} in 90 days, ${RATE_PER_S * 86_400 * 365} a year`);
  } finally {
    await server.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await server.destroy();
    if (db.isInitialized) {
      await db.destroy();
    }
  }
}

/** The n-th allocation's time: one every 1/RATE_PER_S s, as a UTC DATETIME(3) literal. */
function at(start: number, n: number): string {
  return new Date(start + (n * 1000) / RATE_PER_S).toISOString().replace('T', ' ').slice(0, 23);
}

async function fill(db: DataSource, into: string, row: (i: number) => unknown[]): Promise<void> {
  for (let first = 0; first < ROWS; first += BATCH) {
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let i = first; i < Math.min(ROWS, first + BATCH); i++) {
      const r = row(i);
      tuples.push(`(${r.map(() => '?').join(', ')})`);
      values.push(...r);
    }
    await db.query(`INSERT INTO ${into} VALUES ${tuples.join(', ')}`, values);
  }
}

function gb(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(0)} MB`;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
