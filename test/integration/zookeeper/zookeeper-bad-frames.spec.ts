import { ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ZookeeperClient } from '../../../src/infra/zookeeper/zookeeper-client';
import { pollUntil } from '../../support/poll';
import { DriverCommand, DriverReply } from './zk-frame-driver';
import { FRAME_FAULTS, ZkFaultProxy } from './zk-fault-proxy';

/**
 * node-zookeeper-client threw out of its socket 'data' handler on a malformed frame ("Unknown
 * code: <n>", "offset out of range", …) and killed the whole service; a connection cut mid-frame
 * left the half frame buffered and glued it to the next connection's first bytes, which is how the
 * chaos suite met it. A proxy in front of the real ZooKeeper breaks one reply in each known way;
 * the client runs in a child process. Every time: the calls in flight fail with CONNECTION_LOSS, the
 * connection is dropped and re-established on the same session, the next call works, and the
 * process lives on to exit normally.
 */
const ZK = process.env.TEST_ZK_ADDRESS ?? '127.0.0.1:2181';
const [ZK_HOST, ZK_PORT] = ZK.split(':');
const CONNECTION_LOSS = -4;
/** Liveness bound for one driver command (a hang fails the test instead of stalling it). */
const REPLY_WAIT_MS = 15_000;

class Driver {
  private stderr = '';
  private exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(address: string): Driver {
    const child = fork(join(__dirname, 'zk-frame-driver.ts'), [address], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    return new Driver(child);
  }

  async request(command: DriverCommand): Promise<DriverReply> {
    if (!this.child.connected) {
      throw new Error(`driver gone (exit code ${await this.exited}) before ${command.cmd}:\n${this.stderr}`);
    }
    const reply = new Promise<DriverReply>((resolve) => this.child.once('message', (m: DriverReply) => resolve(m)));
    this.child.send(command);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      reply,
      this.exited.then((code) => new Error(`driver died (exit code ${code}) during ${command.cmd}:\n${this.stderr}`)),
      new Promise<Error>((resolve) => {
        timer = setTimeout(() => resolve(new Error(`no reply to ${command.cmd} within ${REPLY_WAIT_MS} ms`)), REPLY_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (outcome instanceof Error) {
      throw outcome;
    }
    return outcome;
  }

  /** Asks the driver to close its clients and exit; resolves its exit code. */
  async exit(): Promise<number | null> {
    await this.request({ cmd: 'exit' });
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}

describe('ZooKeeper client on malformed frames from the server', () => {
  const path = `/shardleaf-test-frames-${randomBytes(4).toString('hex')}`;
  let admin: ZookeeperClient;
  let proxy: ZkFaultProxy;
  let driver: Driver | null = null;

  beforeAll(async () => {
    admin = new ZookeeperClient({ address: ZK, sessionTimeoutMs: 5000, connectTimeoutMs: 5000 });
    await admin.create(path, Buffer.from('still here'));
  });

  afterAll(async () => {
    await admin.multi([{ op: 'remove', path, version: -1 }]);
    await admin.close();
  });

  beforeEach(async () => {
    proxy = await ZkFaultProxy.start(Number(ZK_PORT), ZK_HOST);
  });

  afterEach(async () => {
    driver?.kill();
    driver = null;
    await proxy.close();
  });

  it.each(FRAME_FAULTS)('%s: the call fails, the client reconnects on the same session, the process lives', async (fault) => {
    driver = Driver.start(proxy.address);
    const { sessionId } = await driver.request({ cmd: 'connect' });
    expect(await driver.request({ cmd: 'getData', path })).toEqual({ ok: true, data: 'still here' });

    // Three calls in flight: the first reply is broken; none is left hanging, none succeeds.
    const injected = proxy.arm(fault);
    const { replies } = await driver.request({ cmd: 'getDataMany', path, count: 3 });
    await injected;
    expect(replies?.map((r) => r.code)).toEqual([CONNECTION_LOSS, CONNECTION_LOSS, CONNECTION_LOSS]);

    expect(await driver.request({ cmd: 'awaitReconnected' })).toEqual({ ok: true, sessionId });
    expect(await driver.request({ cmd: 'getData', path })).toEqual({ ok: true, data: 'still here' });
    expect(await driver.exit()).toBe(0);
  });

  // close() during the handshake queued a CLOSE_SESSION with xid 0; the connect response that came
  // next was read as the reply to it, its session id as an error code: "Unknown code: <random>".
  it('a client closed while its handshake is unanswered: the late answer does not end the process', async () => {
    driver = Driver.start(proxy.address);
    proxy.hold();
    const held = proxy.whenHeld();
    await driver.request({ cmd: 'startConnecting' });
    await held;
    const closed = driver.request({ cmd: 'closeRaw' });
    proxy.release();
    expect(await closed).toEqual({ ok: true });
    expect(await driver.exit()).toBe(0);
  });

  it.each(['unknown-error-code', 'cut-mid-frame'] as const)(
    '%s through the service wrapper: unavailable, then served again',
    async (fault) => {
      const wrapped = Driver.start(proxy.address);
      driver = wrapped;
      expect(await wrapped.request({ cmd: 'wrapperGetData', path })).toEqual({ ok: true, data: 'still here' });

      const injected = proxy.arm(fault);
      const failed = await wrapped.request({ cmd: 'wrapperGetData', path });
      await injected;
      expect(failed).toMatchObject({ ok: false, unavailable: true });

      // Unavailable until the connection is back.
      const reply = await pollUntil('the wrapper to be served again', async () => {
        const next = await wrapped.request({ cmd: 'wrapperGetData', path });
        expect(next.ok || next.unavailable).toBe(true);
        return next.ok && next;
      });
      expect(reply).toEqual({ ok: true, data: 'still here' });
      expect(await wrapped.exit()).toBe(0);
    },
  );
});
