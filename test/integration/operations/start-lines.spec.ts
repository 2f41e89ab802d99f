import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as pinoLogger from '../../../src/logging/pino-logger';
import { startService } from '../../../src/start-service';
import { BUILD_DIR, ensureBuilt } from '../../chaos/support/service-process';
import { freePort } from '../../support/free-port';
import { appSuite } from '../../support/app-suite';
import { LogLine, captureLog } from '../../support/log-capture';


/** No stack trace anywhere in a line: no `stack` field, no "    at " frame. */
function expectNoStack(lines: LogLine[]): void {
  for (const line of lines) {
    expect(JSON.stringify(line)).not.toMatch(/"stack"|\\n\s+at /);
  }
}

describe('the start: one line of its own, backends named when they do not answer', () => {
  const suite = appSuite('startlines');

  it('writes at most 5 lines at LOG_LEVEL=log, one of them what listens where, in which modes, against which backends', async () => {
    const { lines, stream } = captureLog();
    const config = suite.env.config({ LOG_LEVEL: 'log', HOST: '127.0.0.1' });
    const app: NestFastifyApplication = await startService(config, { logDestination: stream });
    suite.defer(() => app.close());
    expect(lines.length).toBeLessThanOrEqual(5);
    const started = lines.filter((l) => l.msg.startsWith('listening on http://127.0.0.1:'));
    expect(started).toHaveLength(1);
    const { port } = app.getHttpServer().address() as { port: number };
    expect(started[0].msg).toContain(`http://127.0.0.1:${port}:`);
    expect(started[0].msg).toMatch(/queue IDs \(refill by sweep and on demand\), segment on, snowflake mysql \(worker \d+\)/);
    expect(started[0].msg).toContain(`MySQL ${config.database.host}:${config.database.port}/${suite.env.database}`);
    expect(started[0].msg).toMatch(/Redis 127\.0\.0\.1:6379\/0; admin API on$/);
    // Nest's module and route lines are debug lines now.
    expect(lines.map((l) => l.msg).join('\n')).not.toMatch(/Mapped \{|dependencies initialized|Starting Nest application/);
    expectNoStack(lines);
  });

  it('names a snowflake layout other than Leaf\'s in that line', async () => {
    const { lines, stream } = captureLog();
    const app: NestFastifyApplication = await startService(suite.env.config({ LOG_LEVEL: 'log', SNOWFLAKE_LAYOUT: 'js-safe' }), { logDestination: stream });
    suite.defer(() => app.close());
    expect(lines.filter((l) => l.msg.startsWith('listening on')).map((l) => l.msg)).toEqual([
      expect.stringMatching(/, snowflake mysql \(js-safe layout, worker \d+\);/),
    ]);
  });

  it('writes every line through one root logger (one stream to stdout), the app\'s lines included', async () => {
    const created = jest.spyOn(pinoLogger, 'createRootLogger');
    try {
      const { lines, stream } = captureLog();
      const app: NestFastifyApplication = await startService(suite.env.config({ LOG_LEVEL: 'debug' }), { logDestination: stream });
      suite.defer(() => app.close());
      expect(created).toHaveBeenCalledTimes(1);
      // Nest's own lines (debug here) came through it too.
      expect(lines.some((l) => l.context === 'InstanceLoader')).toBe(true);
    } finally {
      created.mockRestore();
    }
  });

  it('names any other failure of the start in one line, saying where the stack is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardleaf-startlines-'));
    suite.defer(() => rmSync(dir, { recursive: true, force: true }));
    const config = suite.env.config({
      LOG_LEVEL: 'log',
      SNOWFLAKE_MODE: 'local',
      SNOWFLAKE_IP: '10.9.8.7',
      SNOWFLAKE_PORT: '8080',
      SNOWFLAKE_WORKER_ID: '7',
      SNOWFLAKE_CACHE_DIR: dir,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    });
    const first = await startService(config, { logDestination: captureLog().stream });
    await first.close();
    // The cache file now records a time an hour ahead of this clock: the local registry refuses.
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.json')) as string);
    writeFileSync(file, JSON.stringify({ workerId: 7, maxTimestamp: Date.now() + 3_600_000 }));
    const { lines, stream } = captureLog();
    await expect(startService(config, { logDestination: stream })).rejects.toThrow();
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      expect.stringMatching(/^error shardleaf did not start: .*behind the time recorded in the cache file.* \(LOG_LEVEL=debug shows the stack\)$/),
    ]);
    expectNoStack(lines);
  });

  it.each([
    ['DATABASE_URL', /^MySQL at DATABASE_URL \(127\.0\.0\.1:PORT\/\w+\) refused the connection/],
    ['REDIS_URL', /^Redis at REDIS_URL \(127\.0\.0\.1:PORT\/0\) refused the connection/],
  ])('refuses the start within 5 s when %s points at a closed port: one line naming the backend, the variable and the address', async (variable, pattern) => {
    const port = await freePort();
    const url = new URL(suite.env.env[variable]);
    url.host = `127.0.0.1:${port}`;
    const { lines, stream } = captureLog();
    const started = Date.now();
    await expect(startService(suite.env.config({ LOG_LEVEL: 'log', [variable]: url.toString() }), { logDestination: stream })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('error');
    expect(lines[0].msg).toMatch(new RegExp(pattern.source.replace('PORT', String(port))));
    expect(lines[0].msg).toContain('not starting');
    expectNoStack(lines);
  });

  it('the built entry point (main.js) exits 1 with that one line, on stdout as JSON, when MySQL does not answer', async () => {
    ensureBuilt();
    const port = await freePort();
    const env = { ...process.env, ...suite.env.env, LOG_LEVEL: 'log', DATABASE_URL: `mysql://u:p@127.0.0.1:${port}/db` };
    const child = spawn(process.execPath, [join(BUILD_DIR, 'src', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // A start that hangs instead of exiting is killed, never left behind.
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stdout = '';
    let stderr = '';
    let code: number | null;
    try {
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      code = await exited;
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as LogLine);
    expect(lines.map((l) => l.msg)).toEqual([
      `MySQL at DATABASE_URL (127.0.0.1:${port}/db) refused the connection (nothing listens there): not starting (start it, or correct the variable)`,
    ]);
    expectNoStack(lines);
  }, 300_000);
});
