import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/** One direction of a proxied connection: bytes held back while the proxy is frozen. */
interface Relay {
  from: Socket;
  to: Socket;
  held: Buffer[];
}

/**
 * A loopback TCP proxy the test can cut (an outage or a network partition, without touching the
 * real server), restore, switch to another target (a failover behind a virtual IP: open
 * connections are closed), retarget (a DNS name moved: only new connections go to the new
 * target, open ones stay with the old one), or freeze (a frozen server or a black-holed path: the
 * proxy accepts connections and data and passes nothing on, in either direction, until `thaw`).
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private readonly relays = new Set<Relay>();
  private up = true;
  private frozen = false;

  private constructor(
    private readonly server: Server,
    private targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /**
   * `keepHalfOpen`: a connection the client ends (FIN) is never closed from this side, as a peer
   * that never closes (the client's socket stays open, half-closed, until it destroys it).
   */
  static async start(targetPort: number, targetHost = '127.0.0.1', options: { keepHalfOpen?: boolean } = {}): Promise<TcpProxy> {
    const server = createServer({ allowHalfOpen: options.keepHalfOpen ?? false });
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

  /** New connections go to `targetPort`; open ones stay with the old target (a moved DNS name). */
  retarget(targetPort: number): void {
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

  /** Accepts and holds everything, answers nothing (new connections included) until `thaw`. */
  freeze(): void {
    this.frozen = true;
  }

  /** A path that heals after black-holing: what was held is lost, the connections that saw it are reset. */
  heal(): void {
    this.dropAll();
    this.frozen = false;
  }

  /** Passes on what was held, in order, and lets bytes through again. */
  thaw(): void {
    this.frozen = false;
    for (const relay of this.relays) {
      for (const chunk of relay.held.splice(0)) {
        relay.to.write(chunk);
      }
    }
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
    this.relays.clear();
  }

  private accept(client: Socket): void {
    if (!this.up) {
      client.destroy();
      return;
    }
    const upstream = createConnection(this.targetPort, this.targetHost);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      const relay: Relay = { from, to, held: [] };
      this.sockets.add(from);
      this.relays.add(relay);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.sockets.delete(from);
        this.relays.delete(relay);
        to.destroy();
      });
      from.on('data', (chunk: Buffer) => {
        if (this.frozen) {
          relay.held.push(chunk);
        } else {
          to.write(chunk);
        }
      });
    }
  }
}
