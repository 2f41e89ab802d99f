import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../support/free-port';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { shardOf } from '../../src/queue-id/core/queue-id-layout';
import { pollUntil } from '../support/poll';
import { holdIdAllocRow } from '../support/row-lock';
import { TestEnv, createTestEnv } from '../support/test-env';

/**
 * The container image (Containerfile): built from this checkout by the one documented command
 * (scripts/container/build.sh: Debian base from debootstrap, Node from the npm registry), its
 * config inspected, then — when this machine can run containers — run against the host's Redis
 * and MariaDB (network host): the migration command, /health/live and the HEALTHCHECK, IDs, and
 * `podman stop` (SIGTERM) finishing an in-flight request and ending the process with exit code 0.
 * Only the containers this suite starts are removed; the image is kept as the build cache.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const IMAGE = process.env.SHARDLEAF_TEST_IMAGE ?? 'localhost/shardleaf:test';
const ADMIN = 'container-admin-token';
const STOP_TIMEOUT_S = 30;

interface ImageConfig {
  User: string;
  Entrypoint: string[] | null;
  Cmd: string[] | null;
  Env: string[];
  ExposedPorts?: Record<string, unknown>;
  StopSignal?: string;
}
type Healthcheck = { Test: string[]; Interval?: number; Timeout?: number; Retries?: number } | undefined;

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

describe('container image', () => {
  let config: ImageConfig;
  let healthcheck: Healthcheck;
  let size: number;
  /** Why containers cannot run here (the image is still built and inspected), or null. */
  let cannotRun: string | null = null;

  beforeAll(() => {
    // The build prints its progress; a cold one (debootstrap, npm ci in the build stage) takes minutes.
    const started = Date.now();
    const build = spawnSync('bash', ['scripts/container/build.sh'], {
      cwd: ROOT,
      env: { ...process.env, IMAGE },
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    if (build.status !== 0) {
      throw new Error(`scripts/container/build.sh failed (${build.status}):\n${(build.stdout + build.stderr).slice(-4000)}`);
    }
    console.log(`[container] image ${IMAGE} built in ${Math.round((Date.now() - started) / 1000)} s`);
    const inspected = JSON.parse(
      spawnSync('podman', ['image', 'inspect', IMAGE], { encoding: 'utf8' }).stdout,
    ) as Array<{ Config: ImageConfig & { Healthcheck?: Healthcheck }; Healthcheck?: Healthcheck; Size: number }>;
    config = inspected[0].Config;
    // `podman image inspect` shows it at the top level (docker under Config).
    healthcheck = inspected[0].Healthcheck ?? inspected[0].Config.Healthcheck;
    size = inspected[0].Size;
    const probe = spawnSync('podman', ['run', '--rm', '--network', 'host', '--entrypoint', '/usr/local/bin/node', IMAGE, '-e', 'process.exit(0)'], {
      encoding: 'utf8',
    });
    if (probe.status !== 0) {
      cannotRun = `podman run exited ${probe.status}: ${probe.stderr.trim().split('\n').slice(-3).join(' | ')}`;
      console.warn(`[container] this machine cannot run containers; only the build and the config are checked. ${cannotRun}`);
      if (process.env.SHARDLEAF_CONTAINER_RUN === 'required') {
        throw new Error(`SHARDLEAF_CONTAINER_RUN=required but ${cannotRun}`);
      }
    }
  }, 1_800_000);

  it('runs as a non-root user, node as the entrypoint, with a HEALTHCHECK on /health/live', () => {
    const [user, group] = config.User.split(':');
    expect(user).toMatch(/^\d+$/); // numeric, so runAsNonRoot can verify it
    expect(Number(user)).toBeGreaterThan(0);
    expect(Number(group)).toBeGreaterThan(0);
    expect(config.Entrypoint).toEqual(['/usr/local/bin/node']);
    expect(config.Cmd).toEqual(['dist/src/main.js']);
    expect(config.StopSignal ?? 'SIGTERM').toBe('SIGTERM');
    expect(Object.keys(config.ExposedPorts ?? {})).toEqual(['8080/tcp']);
    expect(config.Env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'PORT=8080']));
    // Built with --format docker; the OCI format would have dropped it.
    expect(healthcheck?.Test[0]).toBe('CMD');
    expect(healthcheck?.Test.join(' ')).toContain('/health/live');
    // Debian minbase ~121 MB + Node ~121 MB + production node_modules ~145 MB; the dev dependencies
    // would add over 100 MB more.
    console.log(`[container] image size ${Math.round(size / 1e6)} MB`);
    expect(size).toBeLessThan(450e6);
  });

  describe('running against the host Redis and MariaDB', () => {
    let env: TestEnv;
    let port: number;
    const name = `shardleaf-test-${process.pid}-${randomBytes(3).toString('hex')}`;

    const containerEnv = (extra: Record<string, string>): string[] =>
      Object.entries({
        DATABASE_URL: env.env.DATABASE_URL,
        REDIS_URL: env.env.REDIS_URL,
        KEY_PREFIX: env.keyPrefix,
        ...extra,
      }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const url = (path: string): string => `http://127.0.0.1:${port}${path}`;

    beforeAll(async () => {
      if (cannotRun) {
        return;
      }
      env = await createTestEnv('container');
      port = await freePort();
    }, 60_000);

    afterAll(async () => {
      if (cannotRun) {
        return;
      }
      await run('podman', ['rm', '--force', '--ignore', name]).catch(() => undefined);
      await env?.cleanup();
    }, 60_000);

    it('applies the migrations with its one-off command', async () => {
      if (cannotRun) {
        console.warn(`[container] not run: ${cannotRun}`);
        return;
      }
      const out = await podman('run', '--rm', '--network', 'host', ...containerEnv({}), IMAGE, 'dist/src/migrate-main.js');
      expect(out).toMatch(/applied CreateIdAlloc\d+/);
      const rows = (await env.sql('SELECT name FROM shardleaf_migrations')) as Array<{ name: string }>;
      expect(rows.length).toBeGreaterThanOrEqual(7);
      const again = await podman('run', '--rm', '--network', 'host', ...containerEnv({}), IMAGE, 'dist/src/migrate-main.js');
      expect(again).toMatch(/no pending migrations/);
    }, 120_000);

    it('serves /health/live, passes its HEALTHCHECK, runs as that user with node as PID 1, and issues IDs', async () => {
      if (cannotRun) {
        console.warn(`[container] not run: ${cannotRun}`);
        return;
      }
      await podman(
        'run', '--detach', '--name', name, '--network', 'host',
        ...containerEnv({
          PORT: String(port),
          ADMIN_TOKEN: ADMIN,
          DB_MIGRATIONS_RUN: 'false', // applied by the previous test's command
          QUEUE_REFILL_CRON: 'off',
          QUEUE_RELOAD_CRON: 'off',
          SEGMENT_SYNC_CRON: 'off',
          LOG_LEVEL: 'warn',
        }),
        IMAGE,
      );
      const live = await pollUntil(
        '/health/live to answer 200',
        async () => {
          const res = await fetch(url('/health/live'));
          return res.status === 200 ? await res.json() : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 250, tolerateErrors: true },
      );
      expect(live).toEqual({ status: 'ok' });
      await podman('healthcheck', 'run', name); // exit code 0 = healthy, else it throws

      expect(await podman('exec', name, 'id', '-u')).toBe(config.User.split(':')[0]);
      const pid1 = await podman('exec', name, 'cat', '/proc/1/cmdline');
      expect(pid1.split('\0').filter(Boolean)).toEqual(['/usr/local/bin/node', 'dist/src/main.js']);

      const created = await fetch(url('/admin/apps'), {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ appId: 7, appName: 'container', step: 1000 }),
      });
      expect(created.status).toBe(201);
      const id = await fetch(url('/api/id/7?gatePass=alice'));
      expect(id.status).toBe(200);
      expect(await id.text()).toMatch(/^[1-9]\d*$/);
      const snowflake = await fetch(url('/api/snowflake/get/container'));
      expect(snowflake.status).toBe(200);
      expect(BigInt(await snowflake.text())).toBeGreaterThan(0n);
    }, 180_000);

    it('podman stop (SIGTERM) lets an in-flight request finish and ends with exit code 0, not a kill', async () => {
      if (cannotRun) {
        console.warn(`[container] not run: ${cannotRun}`);
        return;
      }
      const created = await fetch(url('/admin/apps'), {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ appId: 8, appName: 'stopping', step: 1000 }),
      });
      expect(created.status).toBe(201);
      // A new app's lists are empty: this request refills one on demand, and its allocation (the
      // id_alloc row update) waits for the row lock this test holds. The image has no test hooks.
      const rowLock = await holdIdAllocRow(env.database, 8, shardOf('bob'));
      const inFlight = fetch(url('/api/id/8?gatePass=bob')).then(async (res) => ({ status: res.status, body: await res.text() }));
      let stopping: Promise<string> | undefined;
      try {
        await pollUntil('the refill of the in-flight request to wait for the row', async () => (await rowLock.waiters()) > 0, {
          timeoutMs: 60_000,
          intervalMs: 250,
        });
        // podman sends SIGTERM, then SIGKILL after the timeout (exit code 137).
        stopping = podman('stop', '--time', String(STOP_TIMEOUT_S), name);
        // Closing: a new request is refused (503 SHUTTING_DOWN, or no connection); then the row goes.
        await pollUntil(
          'the service to start closing',
          async () => {
            const res = await fetch(url('/health/live')).catch(() => null);
            return res === null || res.status === 503;
          },
          { timeoutMs: 30_000, intervalMs: 250 },
        );
      } finally {
        await rowLock.release();
      }
      await stopping;
      const state = JSON.parse(await podman('inspect', name, '--format', '{{json .State}}')) as {
        Status: string;
        ExitCode: number;
        OOMKilled: boolean;
      };
      const logs = await run('podman', ['logs', '--tail', '20', name]);
      expect({ status: state.Status, exitCode: state.ExitCode, oom: state.OOMKilled, log: state.ExitCode === 0 ? '' : logs.stdout + logs.stderr }).toEqual({
        status: 'exited',
        exitCode: 0,
        oom: false,
        log: '',
      });
      const finished = await inFlight;
      expect(finished.status).toBe(200);
      expect(finished.body).toMatch(/^[1-9]\d*$/);
    }, 180_000);
  });
});
