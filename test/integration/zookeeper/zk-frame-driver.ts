/**
 * Child process for zookeeper-bad-frames.spec.ts: a ZooKeeper client in a process of its own, so
 * that an exception thrown from the library's socket handlers shows as what it does to a service
 * (the process dies) instead of failing a Jest test. Loads the client the way the service does
 * (through src/infra/zookeeper/zookeeper-client) and answers the parent's commands over IPC.
 *
 * argv: <ZooKeeper address>
 */
import { EventEmitter } from 'node:events';
import { Client, State, createClient } from 'node-zookeeper-client';
import { ZookeeperClient } from '../../../src/infra/zookeeper/zookeeper-client';
import { isUnavailable } from '../../../src/infra/zookeeper/zookeeper-errors';

export type DriverCommand =
  | { cmd: 'connect' }
  | { cmd: 'getData'; path: string }
  /** Several getData calls at once (all in flight when the fault hits). */
  | { cmd: 'getDataMany'; path: string; count: number }
  | { cmd: 'awaitReconnected' }
  /** Starts connecting, without waiting for the session. */
  | { cmd: 'startConnecting' }
  /** Closes the raw client and waits until it is closed. */
  | { cmd: 'closeRaw' }
  | { cmd: 'wrapperGetData'; path: string }
  | { cmd: 'exit' };

export interface DriverReply {
  ok: boolean;
  data?: string;
  sessionId?: string;
  /** ZooKeeper error code of a failed call. */
  code?: number;
  message?: string;
  /** isUnavailable() of a failed wrapper call. */
  unavailable?: boolean;
  replies?: DriverReply[];
}

const address = process.argv[2];
const SESSION_TIMEOUT_MS = 4000;
/** ConnectionManager.STATES.CLOSED of node-zookeeper-client. */
const CLOSED = -2;
let raw: Client | null = null;
let disconnects = 0;
let wrapper: ZookeeperClient | null = null;

function send(reply: DriverReply): void {
  process.send?.(reply);
}

function rawClient(): Client {
  if (!raw) {
    throw new Error('not connected');
  }
  return raw;
}

function getData(path: string): Promise<DriverReply> {
  return new Promise<DriverReply>((resolve) => {
    rawClient().getData(path, (err, data) => {
      if (err) {
        resolve({ ok: false, code: (err as { code?: number }).code, message: String(err) });
      } else {
        resolve({ ok: true, data: data?.toString() });
      }
    });
  });
}

async function handle(msg: DriverCommand): Promise<DriverReply> {
  switch (msg.cmd) {
    case 'connect': {
      const client = createClient(address, { sessionTimeout: SESSION_TIMEOUT_MS, spinDelay: 100 });
      client.on('disconnected', () => disconnects++);
      await new Promise<void>((resolve) => {
        client.once('connected', () => resolve());
        client.connect();
      });
      raw = client;
      disconnects = 0;
      return { ok: true, sessionId: client.getSessionId().toString('hex') };
    }
    case 'getData':
      return getData(msg.path);
    case 'getDataMany':
      return { ok: true, replies: await Promise.all(Array.from({ length: msg.count }, () => getData(msg.path))) };
    case 'startConnecting':
      raw = createClient(address, { sessionTimeout: SESSION_TIMEOUT_MS, spinDelay: 100 });
      raw.connect();
      return { ok: true };
    case 'closeRaw': {
      // A client that never connected emits no 'disconnected': watch the library's own state.
      const client = rawClient();
      raw = null;
      const manager = (client as unknown as { connectionManager: EventEmitter }).connectionManager;
      await new Promise<void>((resolve) => {
        manager.on('state', (state: number) => state === CLOSED && resolve());
        client.close();
      });
      return { ok: true };
    }
    case 'awaitReconnected': {
      // The connection must have been dropped (at least one 'disconnected'), and be back.
      const client = rawClient();
      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (disconnects > 0 && client.getState() === State.SYNC_CONNECTED) {
            client.removeListener('connected', check);
            client.removeListener('disconnected', check);
            resolve();
          }
        };
        client.on('connected', check);
        client.on('disconnected', check);
        check();
      });
      disconnects = 0;
      return { ok: true, sessionId: client.getSessionId().toString('hex') };
    }
    case 'wrapperGetData': {
      wrapper ??= new ZookeeperClient({ address, sessionTimeoutMs: SESSION_TIMEOUT_MS, connectTimeoutMs: 2000 });
      try {
        const node = await wrapper.getData(msg.path);
        return { ok: true, data: node?.data.toString() };
      } catch (err) {
        return { ok: false, message: String(err), unavailable: isUnavailable(err) };
      }
    }
    case 'exit':
      await wrapper?.close();
      if (raw) {
        const client = raw;
        await new Promise<void>((resolve) => {
          client.once('disconnected', () => resolve());
          client.close();
        });
      }
      setImmediate(() => process.exit(0));
      return { ok: true };
  }
}

process.on('message', (msg: DriverCommand) => {
  handle(msg).then(send, (err: unknown) => send({ ok: false, message: String(err) }));
});
