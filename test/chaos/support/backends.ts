import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { freePort } from '../../support/free-port';
import { pollUntil } from '../../support/poll';
import { ManagedProcess } from './managed-process';

/** A private redis-server on a free loopback port, no persistence: a restart comes back empty. */
export class RedisProcess {
  readonly process: ManagedProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'shardleaf-chaos-redis-'));

  private constructor(readonly port: number) {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.process = new ManagedProcess(`redis:${port}`, 'redis-server', [...args, '--dir', this.dir]);
  }

  static async create(): Promise<RedisProcess> {
    const redis = new RedisProcess(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    this.process.start();
    await pollUntil(`${this.process.name} to answer PING`, async () => (await this.command(['PING'])) === 'PONG', {
      timeoutMs: 10_000,
      intervalMs: 100,
      tolerateErrors: true,
    });
  }

  /** SIGSTOP: connections and data are still accepted by the kernel, nothing is answered. */
  freeze(): void {
    process.kill(this.process.pid as number, 'SIGSTOP');
  }

  thaw(): void {
    process.kill(this.process.pid as number, 'SIGCONT');
  }

  /** One command on a short-lived connection. */
  async command(args: string[]): Promise<unknown> {
    const client = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await client.connect();
      return await client.call(args[0], ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  async destroy(): Promise<void> {
    await this.process.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A private MariaDB (mariadb-install-db + mariadbd) with its own data dir on a free loopback
 * port; root without a password. `kill -9` and start again is a crash with InnoDB recovery.
 */
export class MariaDbProcess {
  readonly process: ManagedProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'shardleaf-chaos-mariadb-'));

  private constructor(readonly port: number) {
    const data = join(this.dir, 'data');
    execFileSync(
      'mariadb-install-db',
      ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root'],
      { stdio: 'ignore' },
    );
    this.process = new ManagedProcess(`mariadb:${port}`, 'mariadbd', [
      '--no-defaults',
      `--datadir=${data}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(this.dir, 'mariadb.sock')}`,
      `--pid-file=${join(this.dir, 'mariadb.pid')}`,
      '--user=root',
      '--skip-grant-tables',
      '--innodb-buffer-pool-size=64M',
      '--max-connections=300',
    ]);
  }

  static async create(): Promise<MariaDbProcess> {
    const db = new MariaDbProcess(await freePort());
    await db.start();
    return db;
  }

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    this.process.start();
    await pollUntil(`${this.process.name} to answer SELECT 1`, async () => (await this.query('SELECT 1')) !== undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
      tolerateErrors: true,
    });
  }

  /** SIGSTOP: connections and data are still accepted by the kernel, nothing is answered. */
  freeze(): void {
    process.kill(this.process.pid as number, 'SIGSTOP');
  }

  thaw(): void {
    process.kill(this.process.pid as number, 'SIGCONT');
  }

  async query<T = unknown>(sql: string, params: unknown[] = [], database?: string): Promise<T> {
    const conn = await createConnection({
      host: '127.0.0.1',
      port: this.port,
      user: 'root',
      database,
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
    try {
      const [rows] = await conn.query(sql, params);
      return rows as T;
    } finally {
      await conn.end();
    }
  }

  async destroy(): Promise<void> {
    await this.process.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
