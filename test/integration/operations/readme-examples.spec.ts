import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePort } from '../../support/free-port';
import { pollUntil } from '../../support/poll';
import { curlExamples, outputPattern } from '../../support/readme-examples';
import { TEST_REDIS_URL, deleteByPrefix, rootQuery } from '../../support/test-env';

const ROOT = join(__dirname, '..', '..', '..');
/** run.sh installs nothing here (the servers answer, node_modules is current), but builds and migrates. */
const START_TIMEOUT_MS = 10 * 60_000;

/** Runs one command line in bash; resolves its stdout (curl's progress meter goes to stderr). */
function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code as number) || 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The README's first hour: `bash scripts/run.sh` (the run command, unchanged) on a fresh database
 * and key prefix, then every `curl` example of the README's `sh` blocks run as written — only the
 * port differs — in the README's order, each printing what its `# →` comment shows.
 */
describe("the README's curl examples, after the run command on a fresh database", () => {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const database = `shardleaf_t_readme_${suffix}`;
  const keyPrefix = `test.${suffix}.id.gen.`;
  let port = 0;
  let run: ChildProcess | null = null;
  let output = '';

  beforeAll(async () => {
    port = await freePort();
    run = spawn('bash', ['scripts/run.sh'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: `mysql://shardleaf:shardleaf@127.0.0.1:3306/${database}`,
        REDIS_URL: TEST_REDIS_URL,
        KEY_PREFIX: keyPrefix,
      },
    });
    run.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    run.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    let exited: number | null = null;
    run.on('exit', (code) => (exited = code ?? -1));
    await pollUntil(
      () => `scripts/run.sh to say the service is running; its output so far:\n${output.slice(-3000)}`,
      () => {
        if (exited !== null) {
          throw new Error(`scripts/run.sh exited with ${exited}:\n${output.slice(-3000)}`);
        }
        return output.includes('shardleaf is running on');
      },
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 250 },
    );
  }, START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    const child = run;
    if (child?.pid !== undefined && child.exitCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 20_000);
      await gone;
      clearTimeout(timer);
    }
    await rootQuery(`DROP DATABASE IF EXISTS \`${database}\``);
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    await deleteByPrefix(redis, keyPrefix);
    redis.disconnect();
  }, 60_000);

  it('every curl example answers as the README shows, in order', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const examples = curlExamples(readme);
    expect(examples.length).toBeGreaterThanOrEqual(20);
    const problems: string[] = [];
    for (const example of examples) {
      const where = `README.md:${example.line}: ${example.command}`;
      if (example.expected === null) {
        problems.push(`${where}\n  shows no output: add a "# → …" comment`);
        continue;
      }
      const script = [...example.assignments, example.command].join('\n').replace(/localhost:8080/g, `localhost:${port}`);
      const res = await bash(script);
      const printed = res.stdout.replace(/\n$/, '');
      if (res.code !== 0 || !outputPattern(example.expected).test(printed)) {
        problems.push(`${where}\n  README shows: ${example.expected}\n  it printed:   ${printed.slice(0, 600)} (exit ${res.code})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the run command logged at most 5 lines of its own at start, one saying what listens where', () => {
    const serviceLines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(serviceLines.length).toBeLessThanOrEqual(5);
    expect(serviceLines.filter((line) => line.includes(`"listening on http://0.0.0.0:${port}:`))).toHaveLength(1);
  });
});
