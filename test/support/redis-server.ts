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

  static async start(extraArgs: string[] = [], dir?: string): Promise<OwnRedisServer> {
    const server = new OwnRedisServer(await freePort(), dir ?? mkdtempSync(join(tmpdir(), 'shardleaf-redis-')), extraArgs);
    await server.resume();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts (again) on the same port and waits until it answers PING. */
  async resume(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'];
    this.process = spawn('redis-server', [...args, ...this.extraArgs], { stdio: 'ignore' });
    await waitForPing(this.port);
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
          await OwnRedisServer.start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'], nodeDir),
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
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await waitForPing(port);
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
