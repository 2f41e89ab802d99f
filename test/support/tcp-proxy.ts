import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A loopback TCP proxy the test can cut (an outage or a network partition, without touching the
 * real server), restore, or switch to another target (a failover behind a virtual IP). Cutting or
 * switching destroys the open connections; while cut, new ones are closed at once.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private up = true;

  private constructor(
    private readonly server: Server,
    private targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server, targetPort, targetHost);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** New connections go to `targetPort`; open ones are closed. */
  switchTo(targetPort: number): void {
    this.dropAll();
    this.targetPort = targetPort;
  }

  cut(): void {
    this.up = false;
    this.dropAll();
  }

  /** Lets connections through again (to `targetPort` when given). */
  restore(targetPort?: number): void {
    if (targetPort !== undefined) {
      this.targetPort = targetPort;
    }
    this.up = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private dropAll(): void {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.sockets.clear();
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
