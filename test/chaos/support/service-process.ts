import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../support/free-port';
import { pollUntil } from '../../support/poll';
import { ManagedProcess } from './managed-process';

const ROOT = join(__dirname, '..', '..', '..');
/**
 * A private build (other people's `nest build` empties dist/ while they work): under
 * node_modules/.cache, so `require` still finds the project's node_modules; one per checkout
 * (worktrees may share one node_modules).
 */
export const BUILD_DIR = join(
  ROOT,
  'node_modules',
  '.cache',
  `shardleaf-chaos-${createHash('sha1').update(ROOT).digest('hex').slice(0, 8)}`,
);
/** The suite's entry point: src/main.ts plus the test hooks from the environment (service-main.ts). */
const MAIN = join(BUILD_DIR, 'test', 'chaos', 'support', 'service-main.js');
const TSCONFIG = join('test', 'chaos', 'support', 'tsconfig.service.json');

/**
 * The environment of a service process whose wall clock is `ms` off (clock-shift.ts, preloaded):
 * Date.now() and new Date() read the shifted time, the monotonic clocks do not.
 */
export function shiftedClockEnv(ms: number): Record<string, string> {
  return { NODE_OPTIONS: `--require ${join(BUILD_DIR, 'test', 'chaos', 'support', 'clock-shift.js')}`, CLOCK_SHIFT_MS: String(ms) };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds the service and the suite's entry point (tsc -p test/chaos/support/tsconfig.service.json,
 * incremental) into the private build dir when a source file is newer than the last build.
 */
export function ensureBuilt(): void {
  const info = join(BUILD_DIR, 'tsbuildinfo');
  const built = existsSync(MAIN) && existsSync(info) ? statSync(info).mtimeMs : 0;
  // packages/java-hash/src: the service requires that workspace package's dist/, rebuilt here too.
  // test/support: the provider replacements the entry point compiles in (provider-overrides.ts).
  const sources = ['src', 'migrations', join('packages', 'java-hash', 'src'), join('test', 'chaos', 'support'), join('test', 'support')].map((dir) =>
    newestMtime(join(ROOT, dir)),
  );
  if (Math.max(...sources) < built) {
    return;
  }
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join('packages', 'java-hash', 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  try {
    execFileSync(
      join(ROOT, 'node_modules', '.bin', 'tsc'),
      ['-p', TSCONFIG, '--outDir', BUILD_DIR, '--incremental', '--tsBuildInfoFile', join(BUILD_DIR, 'tsbuildinfo')],
      { cwd: ROOT, stdio: 'pipe' },
    );
  } catch (err) {
    // tsc emits despite type errors in files being edited elsewhere; only a missing output is fatal.
    if (!existsSync(MAIN)) {
      throw err;
    }
  }
}

/**
 * One shardleaf instance, `node <build>/test/chaos/support/service-main.js` (the service with the
 * faults read from TEST_REFILL_DELAY_MS / TEST_CLOCK_OFFSET_MS, see fault-env.ts), on a
 * fixed loopback port (kept across restarts, so its snowflake identity ip:port stays the same).
 */
export class ServiceProcess {
  readonly process: ManagedProcess;
  /** False while the test has taken it out of the load balancer (about to kill it, or down). */
  up = false;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly baseEnv: Record<string, string>,
  ) {
    this.process = new ManagedProcess(name, process.execPath, [MAIN], {
      ...baseEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      SNOWFLAKE_IP: '127.0.0.1',
    });
  }

  static async create(name: string, env: Record<string, string>): Promise<ServiceProcess> {
    return new ServiceProcess(name, await freePort(), env);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it and waits until it answers HTTP. */
  async start(extraEnv: Record<string, string> = {}): Promise<void> {
    this.process.start(extraEnv);
    await pollUntil(
      () => `${this.name} to answer HTTP: ${this.process.log.slice(-3000)}`,
      async () => {
        if (!this.process.running) {
          throw new Error(`${this.name} exited at start: ${this.process.log.slice(-3000)}`);
        }
        return fetch(`${this.baseUrl}/api/snowflake/time`, { signal: AbortSignal.timeout(1000) }).then(
          () => true,
          () => false,
        );
      },
      { timeoutMs: 60_000, intervalMs: 150 },
    );
    this.up = true;
  }

  /** Starts it and expects the start to fail; resolves the exit code and output. */
  async startRefused(extraEnv: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; log: string }> {
    this.process.start(extraEnv);
    const code = await this.process.exited(timeoutMs);
    return { code, log: this.process.log };
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    this.up = false;
    return this.process.stop(signal);
  }
}
