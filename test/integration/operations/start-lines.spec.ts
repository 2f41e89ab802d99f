import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { startService } from '../../../src/start-service';
import { BUILD_DIR, ensureBuilt } from '../../chaos/support/service-process';
import { freePort } from '../../support/free-port';
import { appSuite } from '../../support/app-suite';

type Line = Record<string, unknown> & { level: string; msg: string };

/** A log destination that keeps the JSON lines. */
function capture(): { lines: Line[]; stream: { write(s: string): void } } {
  const lines: Line[] = [];
  return { lines, stream: { write: (s: string) => void lines.push(JSON.parse(s) as Line) } };
}

/** No stack trace anywhere in a line: no `stack` field, no "    at " frame. */
function expectNoStack(lines: Line[]): void {
  for (const line of lines) {
    expect(JSON.stringify(line)).not.toMatch(/"stack"|\\n\s+at /);
  }
}

describe('the start: one line of its own, backends named when they do not answer', () => {
  const suite = appSuite('startlines');

  it('writes at most 5 lines at LOG_LEVEL=log, one of them what listens where, in which modes, against which backends', async () => {
    const { lines, stream } = capture();
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
    const { lines, stream } = capture();
    const app: NestFastifyApplication = await startService(suite.env.config({ LOG_LEVEL: 'log', SNOWFLAKE_LAYOUT: 'js-safe' }), { logDestination: stream });
    suite.defer(() => app.close());
    expect(lines.filter((l) => l.msg.startsWith('listening on')).map((l) => l.msg)).toEqual([
      expect.stringMatching(/, snowflake mysql \(js-safe layout, worker \d+\);/),
    ]);
  });

  it.each([
    ['DATABASE_URL', /^MySQL at DATABASE_URL \(127\.0\.0\.1:PORT\/\w+\) refused the connection/],
    ['REDIS_URL', /^Redis at REDIS_URL \(127\.0\.0\.1:PORT\/0\) refused the connection/],
  ])('refuses the start within 5 s when %s points at a closed port: one line naming the backend, the variable and the address', async (variable, pattern) => {
    const port = await freePort();
    const url = new URL(suite.env.env[variable]);
    url.host = `127.0.0.1:${port}`;
    const { lines, stream } = capture();
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
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Line);
    expect(lines.map((l) => l.msg)).toEqual([
      `MySQL at DATABASE_URL (127.0.0.1:${port}/db) refused the connection (nothing listens there): not starting (start it, or correct the variable)`,
    ]);
    expectNoStack(lines);
  }, 300_000);
});
