import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A TCP proxy the test can cut and restore, to play a database outage without touching the
 * shared server. While cut, open connections are destroyed and new ones closed at once.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private up = true;

  private constructor(
    private readonly server: Server,
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server, targetHost, targetPort);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  cut(): void {
    this.up = false;
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.sockets.clear();
  }

  restore(): void {
    this.up = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (!this.up) {
      client.destroy();
      return;
    }
    const upstream = createConnection(this.targetPort, this.targetHost);
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
      a.pipe(b);
    }
  }
}
