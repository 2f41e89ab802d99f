import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { shardOf } from '../../../src/queue-id/core/java-hash';

/**
 * The client as users install it: `npm pack -w @shardleaf/client` (README, docs/client.md) and
 * `npm install <tarball>` in an empty project, offline. The tarball carries @shardleaf/java-hash
 * (bundleDependencies), so nothing is fetched, and the installed client computes the shard the
 * server computes. No servers: the project needs only npm and the checkout.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');
const NPM_TIMEOUT_MS = 180_000;

describe('@shardleaf/client tarball', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shardleaf-client-pack-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('installs in an empty project without a registry and hashes like the server', async () => {
    await run('npm', ['pack', '-w', '@shardleaf/client', '--pack-destination', dir, '--silent'], {
      cwd: ROOT,
      timeout: NPM_TIMEOUT_MS,
    });
    const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    // The pack leaves no copy of the bundled package in the checkout.
    await expect(readdir(join(ROOT, 'packages', 'client', 'node_modules'))).rejects.toThrow(/ENOENT/);

    const app = join(dir, 'app');
    await run('mkdir', [app]);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, tarball!)], {
      cwd: app,
      timeout: NPM_TIMEOUT_MS,
    });

    const gatePasses = ['', 'abc', 'gate-pass-7', 'polygenelubricants', '\u{1F600}'];
    const script = `const c = require('@shardleaf/client'); console.log(JSON.stringify(${JSON.stringify(gatePasses)}.map((g) => c.shardOf(g))));`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: app });
    expect(JSON.parse(stdout)).toEqual(gatePasses.map((g) => shardOf(g)));
  });
});
