import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/** One proxied connection: its two sockets, and whether it is black-holed. */
interface Pair {
  client: Socket;
  upstream: Socket;
  held: boolean;
}

/**
 * A loopback TCP proxy in front of a real server that can turn into a black-holed path: from
 * `blackHole()` on (or, per connection, from the first chunk the client sends that `holdFrom`
 * accepts, e.g. the first command after a handshake), it passes nothing on in either direction and
 * answers nothing — not even a FIN: a client that only half-closes its socket (`end()`) waits for
 * the server's FIN for ever, as it would on a path that loses every packet (there, until the kernel
 * gives up after about 15 minutes).
 *
 * `clientSocketsHeld()` counts the connections to this proxy whose socket the clients of this
 * process still hold (the service under test runs in-process): a socket left half-closed counts, a
 * destroyed one does not.
 */
export class BlackHoleProxy {
  private readonly pairs = new Set<Pair>();
  private blackHoled = false;

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
    private readonly targetHost: string,
    private readonly holdFrom: ((chunk: Buffer) => boolean) | undefined,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number, options: { targetHost?: string; holdFrom?: (chunk: Buffer) => boolean } = {}): Promise<BlackHoleProxy> {
    // Half-open sockets: a client's FIN does not make the proxy end its side.
    const server = createServer({ allowHalfOpen: true });
    const proxy = new BlackHoleProxy(server, targetPort, options.targetHost ?? '127.0.0.1', options.holdFrom);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Every connection, open and new, is black-holed from now on. */
  blackHole(): void {
    this.blackHoled = true;
    for (const pair of this.pairs) {
      pair.held = true;
    }
  }

  /** Sockets of this process connected to the proxy and not yet destroyed (unref'd ones aside). */
  clientSocketsHeld(): number {
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    return handles.filter((h) => h instanceof Socket && !h.destroyed && h.remotePort === this.port).length;
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = createConnection({ port: this.targetPort, host: this.targetHost, allowHalfOpen: true });
    const pair: Pair = { client, upstream, held: this.blackHoled };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (!pair.held && this.holdFrom?.(chunk) === true) {
        pair.held = true;
      }
      if (!pair.held) {
        upstream.write(chunk);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.held) {
        client.write(chunk);
      }
    });
    client.on('end', () => {
      if (!pair.held) {
        upstream.end();
      }
    });
    upstream.on('end', () => {
      if (!pair.held) {
        client.end();
      }
    });
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        if (!pair.held) {
          other.destroy();
        }
        if (client.destroyed && upstream.destroyed) {
          this.pairs.delete(pair);
        }
      });
    }
  }
}

/** A MySQL client's command packet (sequence id 0): the first one follows the handshake. */
export function isMysqlCommand(chunk: Buffer): boolean {
  return chunk.length >= 5 && chunk[3] === 0;
}
