import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A loopback TCP proxy that cuts a connection in the middle of a reply: armed with `cutOnce`, it
 * watches what each client sends; after a write that matches, the next bytes the server sends on
 * that connection are forwarded only in part (the first `keep` bytes), then both sides are closed.
 * The server surely ran the command (its reply started), the client got a truncated reply.
 */
export class ReplyCutProxy {
  private readonly sockets = new Set<Socket>();
  private armed: { match: (request: Buffer) => boolean; keep: number; resolve: (cutAt: number) => void } | null = null;

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<ReplyCutProxy> {
    const proxy = new ReplyCutProxy(createServer(), targetPort, targetHost);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Cuts the reply to the next client write matching `match` after `keep` bytes; resolves with the bytes forwarded. */
  cutOnce(match: (request: Buffer) => boolean, keep: number): Promise<number> {
    return new Promise((resolve) => {
      this.armed = { match, keep, resolve };
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = createConnection(this.targetPort, this.targetHost);
    let strike: { keep: number; resolve: (cutAt: number) => void } | null = null;
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      const armed = this.armed;
      if (armed && strike === null && armed.match(chunk)) {
        this.armed = null;
        strike = { keep: armed.keep, resolve: armed.resolve };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (strike === null) {
        client.write(chunk);
        return;
      }
      const keep = Math.min(strike.keep, chunk.length - 1);
      const done = strike.resolve;
      client.write(chunk.subarray(0, keep), () => {
        client.destroy();
        upstream.destroy();
        done(keep);
      });
    });
  }
}
