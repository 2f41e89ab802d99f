import { Client, CreateMode, Exception, State, createClient } from 'node-zookeeper-client';
import { ZookeeperUnavailableError } from './zookeeper-errors';
import { installZookeeperFrameGuard } from './zookeeper-frame-guard';

// A malformed frame from ZooKeeper drops the connection instead of throwing out of the library's
// socket handler and ending the process.
installZookeeperFrameGuard();

export interface ZookeeperOptions {
  /** `host:port[,host:port…][/chroot]`. */
  address: string;
  sessionTimeoutMs: number;
  /** How long `connect` (and any operation that needs a new session) waits for one. */
  connectTimeoutMs: number;
}

export interface ZNodeData {
  data: Buffer;
  version: number;
  /** The zxid of the node's creation (hex): a node deleted and created again gets a new one. */
  czxid: string;
}

/** One operation of an atomic `multi`. */
export type ZookeeperOp =
  | { op: 'create'; path: string; data: Buffer }
  | { op: 'remove'; path: string; version: number }
  | { op: 'setData'; path: string; data: Buffer; version: number }
  | { op: 'check'; path: string; version: number };

const CLOSE_GRACE_MS = 1000;

/**
 * Promise API over node-zookeeper-client (pure JS). Operations fail fast with a
 * ZookeeperUnavailableError while disconnected instead of queueing until ZooKeeper is back; an
 * expired session, or a client disconnected for longer than a session lasts, is replaced by a new
 * one at the next operation. Only persistent nodes are used,
 * so a new session loses nothing.
 */
export class ZookeeperClient {
  private client: Client | null = null;
  private opening: Promise<Client> | null = null;
  private closed = false;
  /** When the current client last lost its connection. */
  private disconnectedSince = 0;

  constructor(private readonly options: ZookeeperOptions) {}

  get address(): string {
    return this.options.address;
  }

  async connect(): Promise<void> {
    await this.session();
  }

  isConnected(): boolean {
    return this.client?.getState() === State.SYNC_CONNECTED;
  }

  async getChildren(path: string): Promise<string[]> {
    const client = await this.session();
    return this.call<string[]>(client, (cb) => client.getChildren(path, (err, children) => cb(err, children)));
  }

  /** The node's data and version, or null when it does not exist. */
  async getData(path: string): Promise<ZNodeData | null> {
    const client = await this.session();
    try {
      return await this.call<ZNodeData>(client, (cb) =>
        client.getData(path, (err, data, stat) =>
          cb(err, { data: data ?? Buffer.alloc(0), version: stat?.version, czxid: stat?.czxid.toString('hex') }),
        ),
      );
    } catch (err) {
      if ((err as { getCode?: () => number }).getCode?.() === Exception.NO_NODE) {
        return null;
      }
      throw err;
    }
  }

  /** Creates a persistent node (sequential when asked); resolves the created path. */
  async create(path: string, data: Buffer, sequential = false): Promise<string> {
    const client = await this.session();
    const mode = sequential ? CreateMode.PERSISTENT_SEQUENTIAL : CreateMode.PERSISTENT;
    return this.call<string>(client, (cb) => client.create(path, data, mode, (err, created) => cb(err, created)));
  }

  /** Sets the data when the version matches (-1: any); resolves the new version. */
  async setData(path: string, data: Buffer, version = -1): Promise<number> {
    const client = await this.session();
    return this.call<number>(client, (cb) => client.setData(path, data, version, (err, stat) => cb(err, stat?.version)));
  }

  /** Creates the path and its missing parents. */
  async mkdirp(path: string): Promise<void> {
    const client = await this.session();
    await this.call<string>(client, (cb) => client.mkdirp(path, (err, created) => cb(err, created)));
  }

  /** Runs the operations atomically: all or none. */
  async multi(ops: ZookeeperOp[]): Promise<void> {
    const client = await this.session();
    const tx = client.transaction();
    for (const o of ops) {
      switch (o.op) {
        case 'create':
          tx.create(o.path, o.data, CreateMode.PERSISTENT);
          break;
        case 'remove':
          tx.remove(o.path, o.version);
          break;
        case 'setData':
          tx.setData(o.path, o.data, o.version);
          break;
        case 'check':
          tx.check(o.path, o.version);
          break;
      }
    }
    await this.call<unknown>(client, (cb) => tx.commit((err, results) => cb(err, results)));
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (client) {
      await closeClient(client);
    }
  }

  /**
   * One operation on `client`. No operation waits for ever: without an answer within a session
   * timeout the client is dropped (a new session at the next operation) and the call fails as
   * unavailable. Otherwise a request lost with a dead connection hung its caller, and the
   * snowflake heartbeat (which never overlaps itself) with it: found by the chaos suite.
   */
  private call<T>(client: Client, run: (cb: (err: unknown, value: T | undefined) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.client === client) {
          this.client = null;
          void closeClient(client);
        }
        reject(new ZookeeperUnavailableError(`no answer from ZooKeeper at ${this.options.address} within ${this.options.sessionTimeoutMs} ms`));
      }, this.options.sessionTimeoutMs);
      try {
        run((err, value) => {
          clearTimeout(timer);
          if (err) {
            reject(toError(err));
          } else {
            resolve(value as T);
          }
        });
      } catch (err) {
        // Refused before it was sent (e.g. an invalid path): no answer to wait for.
        clearTimeout(timer);
        reject(toError(err));
      }
    });
  }

  private async session(): Promise<Client> {
    if (this.closed) {
      throw new ZookeeperUnavailableError('the ZooKeeper client is closed');
    }
    if (this.client) {
      if (this.client.getState() === State.SYNC_CONNECTED) {
        return this.client;
      }
      if (Date.now() - this.disconnectedSince <= this.options.sessionTimeoutMs) {
        throw new ZookeeperUnavailableError(`not connected to ZooKeeper at ${this.options.address}`);
      }
      // Disconnected longer than a session lasts: the session is gone or the client is stuck
      // (node-zookeeper-client may not reconnect after a server restart). Start a new session.
      void closeClient(this.client);
      this.client = null;
    }
    this.opening ??= this.open().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private open(): Promise<Client> {
    const client = createClient(this.options.address, {
      sessionTimeout: this.options.sessionTimeoutMs,
      spinDelay: 200,
    });
    return new Promise<Client>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        void closeClient(client);
        reject(
          new ZookeeperUnavailableError(
            `could not connect to ZooKeeper at ${this.options.address} within ${this.options.connectTimeoutMs} ms`,
          ),
        );
      }, this.options.connectTimeoutMs);
      client.once('connected', () => {
        clearTimeout(timer);
        if (timedOut) {
          return; // given up on and being closed: never becomes the current client
        }
        if (this.closed) {
          void closeClient(client);
          reject(new ZookeeperUnavailableError('the ZooKeeper client is closed'));
          return;
        }
        client.on('disconnected', () => {
          this.disconnectedSince = Date.now();
        });
        client.on('expired', () => {
          if (this.client === client) {
            this.client = null;
          }
          void closeClient(client);
        });
        this.client = client;
        resolve(client);
      });
      client.connect();
    });
  }
}

function toError(err: unknown): Error {
  if (err instanceof Error) {
    return err;
  }
  const e = new Error(String(err));
  const code = (err as { getCode?: () => number }).getCode?.();
  Object.assign(e, { code, name: 'ZookeeperError' });
  if (code === Exception.CONNECTION_LOSS) {
    return Object.assign(new ZookeeperUnavailableError(e.message), { zkCode: code });
  }
  return e;
}

/** Closes a client; a socket still open after a short grace is destroyed so no handle is left. */
async function closeClient(client: Client): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CLOSE_GRACE_MS);
    client.once('disconnected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.close();
  });
  const manager = (client as unknown as { connectionManager?: { socket?: { destroy(): void } } }).connectionManager;
  manager?.socket?.destroy();
}
