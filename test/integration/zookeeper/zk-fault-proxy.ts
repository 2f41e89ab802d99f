import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * What the proxy does to the next reply frame (xid >= 0) from ZooKeeper to the client. `frame` is
 * the whole reply as the server sent it: [length][xid][zxid][err][payload].
 */
export type FrameFault =
  /** Sends all but the last 4 bytes of the reply, then ends the connection. */
  | 'cut-mid-frame'
  /** The reply header with an error code ZooKeeper does not define, and no payload. */
  | 'unknown-error-code'
  /** A self-consistent frame (err 0) whose payload is cut short. */
  | 'truncated-payload'
  /** A frame of length 0 before the reply. */
  | 'zero-length'
  /** A negative length prefix before the reply. */
  | 'negative-length'
  /** A length prefix of nearly 2 GiB before the reply: the client would buffer for ever. */
  | 'absurd-length'
  /** Random bytes (fixed seed) before the reply. */
  | 'garbage'
  /** The reply with an xid the client never sent, followed by more data. */
  | 'wrong-xid'
  /** A watch notification of an event type ZooKeeper does not define, before the reply. */
  | 'bad-notification';

export const FRAME_FAULTS: FrameFault[] = [
  'cut-mid-frame',
  'unknown-error-code',
  'truncated-payload',
  'zero-length',
  'negative-length',
  'absurd-length',
  'garbage',
  'wrong-xid',
  'bad-notification',
];

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

/** A frame: its length prefix, then the body. */
function frameOf(body: Buffer): Buffer {
  return Buffer.concat([int32(body.length), body]);
}

/** Deterministic bytes (xorshift32), so a failing run can be replayed. */
function seededBytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed | 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/**
 * A TCP proxy in front of a real ZooKeeper that splits the server's stream into frames and, when
 * armed, breaks the next reply in one chosen way, once. Everything else (the handshake, pings,
 * later connections) passes through untouched, so the client can reconnect to the real server.
 */
export class ZkFaultProxy {
  private readonly sockets = new Set<Socket>();
  private armed: FrameFault | null = null;
  private applied: Array<() => void> = [];
  private holding = false;
  private readonly held: Array<{ client: Socket; sent: Buffer[] }> = [];
  private heldWaiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<ZkFaultProxy> {
    const server = createServer();
    const proxy = new ZkFaultProxy(server, targetPort, targetHost);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Breaks the next reply; resolves once it has been sent broken. */
  arm(fault: FrameFault): Promise<void> {
    this.armed = fault;
    return new Promise<void>((resolve) => this.applied.push(resolve));
  }

  /**
   * New connections are accepted but not passed on to ZooKeeper: what the client sends is kept
   * (the server is slow to answer the handshake) until `release`.
   */
  hold(): void {
    this.holding = true;
  }

  /** Resolves once a held connection has sent its first full frame (the connect request). */
  whenHeld(): Promise<void> {
    return new Promise<void>((resolve) => this.heldWaiters.push(resolve));
  }

  /** Passes the held connections, and what they sent, on to ZooKeeper. */
  release(): void {
    this.holding = false;
    for (const { client, sent } of this.held.splice(0)) {
      client.removeAllListeners('data');
      this.accept(client, Buffer.concat(sent));
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private hold1(client: Socket): void {
    const entry = { client, sent: [] as Buffer[] };
    this.held.push(entry);
    this.sockets.add(client);
    client.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      entry.sent.push(chunk);
      const bytes = Buffer.concat(entry.sent);
      if (bytes.length >= 4 && bytes.length >= 4 + bytes.readInt32BE(0)) {
        for (const resolve of this.heldWaiters.splice(0)) {
          resolve();
        }
      }
    });
  }

  private accept(client: Socket, alreadySent?: Buffer): void {
    if (this.holding) {
      this.hold1(client);
      return;
    }
    const upstream = createConnection(this.targetPort, this.targetHost);
    if (alreadySent?.length) {
      upstream.write(alreadySent);
    }
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    let handshakeDone = false;
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0);
        const frame = pending.subarray(0, 4 + size);
        pending = pending.subarray(4 + size);
        const isReply = handshakeDone && frame.readInt32BE(4) >= 0;
        handshakeDone = true;
        if (!isReply || this.armed === null) {
          client.write(frame);
          continue;
        }
        const fault = this.armed;
        this.armed = null;
        const stop = this.inject(fault, frame, client, upstream);
        for (const resolve of this.applied.splice(0)) {
          resolve();
        }
        if (stop) {
          return;
        }
      }
    });
  }

  /** Sends `frame` broken as `fault` asks; true when the connection is gone. */
  private inject(fault: FrameFault, frame: Buffer, client: Socket, upstream: Socket): boolean {
    const header = frame.subarray(4, 20); // xid, zxid, err
    const payload = frame.subarray(20);
    switch (fault) {
      case 'cut-mid-frame':
        // The client side is ended once the partial frame is flushed; upstream goes at once.
        upstream.removeAllListeners('close');
        this.sockets.delete(upstream);
        upstream.destroy();
        client.end(frame.subarray(0, frame.length - 4));
        return true;
      case 'unknown-error-code': {
        const h = Buffer.from(header);
        h.writeInt32BE(-987654321, 12);
        client.write(frameOf(h));
        return false;
      }
      case 'truncated-payload':
        client.write(frameOf(Buffer.concat([header, payload.subarray(0, Math.min(8, payload.length - 1))])));
        return false;
      case 'zero-length':
        client.write(Buffer.concat([int32(0), frame]));
        return false;
      case 'negative-length':
        client.write(Buffer.concat([int32(-16), frame]));
        return false;
      case 'absurd-length':
        client.write(Buffer.concat([int32(0x7ffffff0), frame]));
        return false;
      case 'garbage':
        client.write(Buffer.concat([seededBytes(64, 0x5eed), frame]));
        return false;
      case 'wrong-xid': {
        const f = Buffer.from(frame);
        f.writeInt32BE(f.readInt32BE(4) + 1000, 4);
        client.write(Buffer.concat([f, frame]));
        return false;
      }
      case 'bad-notification': {
        const path = Buffer.from('/no-such-watch');
        const body = Buffer.concat([int32(-1), Buffer.alloc(8), int32(0), int32(99), int32(3), int32(path.length), path]);
        client.write(Buffer.concat([frameOf(body), frame]));
        return false;
      }
    }
  }
}
