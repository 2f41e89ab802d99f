import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/free-port';
import { pollUntil } from '../../support/poll';


const ZK_SERVER = process.env.ZK_SERVER_SH ?? '/usr/share/zookeeper/bin/zkServer.sh';

/** Sends a four-letter word; resolves the reply ('' when nothing answers). */
function fourLetter(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (): void => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(1000, done);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('end', done);
    socket.on('error', done);
  });
}

/**
 * A private ZooKeeper (own port, own data dir) for tests that stop it; the shared one on 2181 is
 * never stopped. `stop` kills the JVM; `start` again reuses the same data dir.
 */
export class ZookeeperServer {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'shardleaf-zk-'));

  private constructor(readonly port: number) {
    writeFileSync(
      join(this.dir, 'zoo.cfg'),
      [
        'tickTime=500',
        'minSessionTimeout=1000',
        `dataDir=${join(this.dir, 'data')}`,
        `clientPort=${port}`,
        'clientPortAddress=127.0.0.1',
        'admin.enableServer=false',
        '4lw.commands.whitelist=ruok,srvr',
        'maxClientCnxns=200',
      ].join('\n'),
    );
  }

  static async create(): Promise<ZookeeperServer> {
    const server = new ZookeeperServer(await freePort());
    await server.start();
    return server;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) {
      return;
    }
    this.child = spawn(ZK_SERVER, ['start-foreground', join(this.dir, 'zoo.cfg')], {
      env: { ...process.env, ZOOCFGDIR: this.dir, ZOO_LOG_DIR: this.dir, SERVER_JVMFLAGS: '-Xmx256m' },
      stdio: 'ignore',
    });
    try {
      await pollUntil(`test ZooKeeper to answer on ${this.address}`, async () => (await fourLetter(this.port, 'ruok')).includes('imok'), {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) {
      return;
    }
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
