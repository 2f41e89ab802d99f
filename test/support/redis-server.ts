import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { freePort } from './free-port';
import { pollUntil } from './poll';


const run = promisify(execFile);

/**
 * A redis-server of the test's own (free port, own directory, no persistence), which the test
 * may stop and start again; the shared server is never touched.
 */
export class OwnRedisServer {
  private process: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly extraArgs: string[],
  ) {}

  /**
   * Starts on a free port. A free port is only free when it was asked for: another process may
   * bind it before redis-server does (more likely on a loaded machine), and a cluster node also
   * binds its bus port. A server that exits at start is started again on new ports (at most
   * 5 times); one that runs but never answers fails.
   */
  static async start(extraArgs: string[] = [], dir?: string, options: { clusterBus?: boolean } = {}): Promise<OwnRedisServer> {
    const serverDir = dir ?? mkdtempSync(join(tmpdir(), 'shardleaf-redis-'));
    for (let attempt = 1; ; attempt++) {
      const args = options.clusterBus ? [...extraArgs, '--cluster-port', String(await freePort())] : extraArgs;
      const server = new OwnRedisServer(await freePort(), serverDir, args);
      try {
        await server.resume();
        return server;
      } catch (err) {
        await server.stop();
        if (!(err instanceof ExitedAtStart) || attempt >= 5) {throw err;}
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts (again) on the same port and waits until it answers PING. */
  async resume(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'];
    const child = spawn('redis-server', [...args, ...this.extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    await waitForStart(child, this.port);
  }

  /** SIGSTOP: the kernel still accepts connections and data, the server answers nothing (a VM pause, a long stall). */
  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  /** SIGCONT after `freeze`: the server reads what waited and answers again. */
  thaw(): void {
    this.process?.kill('SIGCONT');
  }

  /** Kills the server and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (child && child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A redis-server that exited before it answered PING; `output` is the end of what it printed. */
class ExitedAtStart extends Error {
  constructor(port: number, code: number | null, output: string) {
    super(`redis-server on port ${port} exited at start (code ${code}): ${output.slice(-500)}`);
  }
}

/** Waits for PING, failing at once (with the server's own words) when the process exits first. */
async function waitForStart(child: ChildProcess, port: number): Promise<void> {
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let onExit: (code: number | null) => void = () => undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = (code) => reject(new ExitedAtStart(port, code, output));
    child.once('exit', onExit);
  });
  try {
    await Promise.race([waitForPing(port), exited]);
  } catch (err) {
    if (err instanceof ExitedAtStart) {
      throw err;
    }
    throw new Error(`${(err as Error).message}; redis-server printed: ${output.slice(-500) || 'nothing'}`, { cause: err });
  } finally {
    child.off('exit', onExit);
    exited.catch(() => undefined);
    // The server keeps logging to a pipe nobody reads once started: drain it so it never blocks.
    child.stdout?.resume();
    child.stderr?.resume();
  }
}

async function waitForPing(port: number): Promise<void> {
  await pollUntil(`redis-server on port ${port} to answer PING`, async () => (await run('redis-cli', ['-p', String(port), 'ping'])).stdout.includes('PONG'), {
    tolerateErrors: true,
  });
}

/** A local Redis Cluster of `masters` redis-servers (no replicas), created with redis-cli. */
export class OwnRedisCluster {
  private constructor(
    readonly servers: OwnRedisServer[],
    private readonly dir: string,
  ) {}

  static async start(masters = 3): Promise<OwnRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'shardleaf-cluster-'));
    const servers: OwnRedisServer[] = [];
    try {
      for (let i = 0; i < masters; i++) {
        const nodeDir = join(dir, `node${i}`);
        await run('mkdir', ['-p', nodeDir]);
        servers.push(
          await OwnRedisServer.start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'], nodeDir, { clusterBus: true }),
        );
      }
      await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-yes']);
      const cluster = new OwnRedisCluster(servers, dir);
      await cluster.waitUntilOk();
      return cluster;
    } catch (err) {
      await Promise.all(servers.map((s) => s.destroy()));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** `host:port,host:port…` for REDIS_CLUSTER_NODES. */
  get nodes(): string {
    return this.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  private async waitUntilOk(): Promise<void> {
    await pollUntil('the Redis Cluster to reach cluster_state:ok', async () => {
      const states = await Promise.all(
        this.servers.map(async (s) => {
          const client = new Redis(s.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
          try {
            await client.connect();
            return String(await client.cluster('INFO'));
          } finally {
            client.disconnect();
          }
        }),
      );
      return states.every((info) => info.includes('cluster_state:ok'));
    }, { intervalMs: 100 });
  }

  async destroy(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.destroy()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One Redis Sentinel of the test's own, watching `master` under `name` (quorum 1). */
export class OwnRedisSentinel {
  private constructor(
    private readonly process: ChildProcess,
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(master: OwnRedisServer, name: string): Promise<OwnRedisSentinel> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'shardleaf-sentinel-'));
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`, ''].join('\n'),
    );
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForStart(child, port);
    return new OwnRedisSentinel(child, port, dir);
  }

  async destroy(): Promise<void> {
    if (this.process.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
      this.process.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
