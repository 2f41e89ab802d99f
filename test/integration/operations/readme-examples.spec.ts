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
    execFile('bash', ['-c', script], { cwd: ROOT, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code as number) || 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The environment of a user's shell: what run.sh and the tools it calls need, nothing of the test runner's. */
function shellEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) {
      env[name] = value;
    }
  }
  return env;
}

/** Revokes what run.sh's ensure_db_user granted on `database` (as root, as run.sh does); errors are only reported. */
async function revokeRunGrants(database: string): Promise<void> {
  const pattern = database.replace(/[_%]/g, '\\$&');
  const sql = ['127.0.0.1', 'localhost'].map((host) => `REVOKE ALL PRIVILEGES ON \`${pattern}\`.* FROM 'shardleaf'@'${host}';`).join(' ');
  const res = await bash(`source scripts/lib/services.sh && mysql_root -e ${shellQuote(sql)}`);
  if (res.code !== 0) {
    console.warn(`[readme] revoking the grants of ${database}: ${res.stderr.trim()}`);
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
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
        // A user's shell, not the test runner's environment (its TEST_*, LOG_LEVEL, NODE_OPTIONS…).
        ...shellEnv(),
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
    let killer: NodeJS.Timeout | undefined;
    try {
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        const pid = child.pid;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        // The whole group: bash, and the service it started. Throws ESRCH when it is gone already.
        process.kill(-pid, 'SIGTERM');
        killer = setTimeout(() => {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }, 20_000);
        await gone;
      }
    } catch (err) {
      console.warn(`[readme] stopping scripts/run.sh: ${(err as Error).message}`);
    } finally {
      clearTimeout(killer);
      await rootQuery(`DROP DATABASE IF EXISTS \`${database}\``).catch((err: Error) => console.warn(`[readme] ${err.message}`));
      // run.sh granted the user 'shardleaf' this database (escaped: _ is a wildcard in a GRANT).
      await revokeRunGrants(database);
      const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      await deleteByPrefix(redis, keyPrefix).finally(() => redis.disconnect());
    }
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
    const listening = serviceLines.filter((line) => line.includes(`"listening on http://0.0.0.0:${port}:`));
    expect(listening).toHaveLength(1);
    // The start's lines: up to the listening line (later ones are the examples' and the schedules').
    expect(serviceLines.slice(0, serviceLines.indexOf(listening[0]) + 1).length).toBeLessThanOrEqual(5);
  });
});
