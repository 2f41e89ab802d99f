import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** `npm run bench` runs this worker in a child process: it must run against the current generator. */
describe('bench worker scripts/bench/workers/snowflake-peers.ts', () => {
  it.each(['shardleaf-batch', 'shardleaf-next'])('%s issues the IDs asked for, none twice', (name) => {
    const out = execFileSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', join(ROOT, 'scripts/bench/workers/snowflake-peers.ts'), name, '20000'],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    const result = JSON.parse(out.trim().split('\n').pop() as string) as { ids: number; duplicates: number; nonIncreasing: number };
    expect(result).toMatchObject({ ids: 20000, duplicates: 0, nonIncreasing: 0 });
  });
});
