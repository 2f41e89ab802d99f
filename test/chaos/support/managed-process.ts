import { ChildProcess, spawn } from 'node:child_process';

/**
 * A child process the chaos tests start, signal and restart. Its output is kept (bounded) so a
 * test can wait for a log line; every process is killed when the test run ends.
 */
export class ManagedProcess {
  private child: ChildProcess | null = null;
  private output = '';
  private readonly waiters = new Set<() => void>();
  private static readonly all = new Set<ManagedProcess>();

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: Record<string, string | undefined> = {},
  ) {}

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get log(): string {
    return this.output;
  }

  start(extraEnv: Record<string, string> = {}): void {
    if (this.running) {
      throw new Error(`${this.name} is already running`);
    }
    this.output = '';
    const child = spawn(this.command, this.args, {
      env: { ...process.env, ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const onData = (chunk: Buffer): void => {
      this.output += chunk.toString();
      for (const wake of this.waiters) {
        wake();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', () => {
      for (const wake of this.waiters) {
        wake();
      }
    });
    this.child = child;
    ManagedProcess.all.add(this);
  }

  /**
   * Resolves the first match of `pattern` in the output after offset `since` (see `log.length`);
   * rejects on exit or after `timeoutMs`.
   */
  async waitForLine(pattern: RegExp, timeoutMs: number, since = 0): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.output.slice(since));
      if (m) {
        return m;
      }
      if (!this.running) {
        throw new Error(`${this.name} exited while waiting for ${pattern}: ${this.output.slice(-2000)}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`${this.name}: no ${pattern} within ${timeoutMs} ms: ${this.output.slice(-2000)}`);
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 200));
        this.waiters.add(wake);
      });
    }
  }

  /** Sends `signal` without waiting for anything (SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void {
    if (!this.child || !this.running) {
      throw new Error(`${this.name} is not running`);
    }
    this.child.kill(signal);
  }

  /** Sends `signal` and waits for the exit; resolves the exit code (null when killed). */
  async stop(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 15_000): Promise<number | null> {
    const child = this.child;
    if (!child || !this.running) {
      return child?.exitCode ?? null;
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  /** Waits for the process to exit by itself; resolves its exit code (null when killed). */
  async exited(timeoutMs: number): Promise<number | null> {
    const child = this.child;
    if (!child || !this.running) {
      return child?.exitCode ?? null;
    }
    return new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms`)), timeoutMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
  }

  static async killAll(): Promise<void> {
    await Promise.all([...ManagedProcess.all].map((p) => p.stop('SIGKILL')));
    ManagedProcess.all.clear();
  }
}
