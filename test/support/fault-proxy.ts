import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';
import { readResp } from './resp-reader';

/** Which command to strike: its words (name upper-cased, then up to 3 arguments). */
export type CommandMatcher = (words: string[]) => boolean;

interface Strike {
  match: CommandMatcher;
  /** After the cut, new connections wait (their bytes buffered) until `restore`. */
  pauseAfterCut: boolean;
  /** Also drop the replies to commands sent before the struck one and unanswered then (its pipeline). */
  dropPipeline: boolean;
  resolve: (words: string[]) => void;
}

/**
 * A loopback Redis proxy that injects "executed, but the reply was lost": armed with `strikeOnce`,
 * it forwards the first matching command to the server, stops forwarding anything the client sends
 * after it, waits for the server's reply to it (so the server surely executed it), drops that
 * reply and closes the connection. Replies to earlier commands still reach the client.
 */
export class FaultProxy {
  private readonly sockets = new Set<Socket>();
  private readonly waiting: Array<{ client: Socket; pending: Buffer[] }> = [];
  private strike: Strike | null = null;
  private paused = false;

  private constructor(
    private readonly server: Server,
    private targetPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number): Promise<FaultProxy> {
    const proxy = new FaultProxy(createServer(), targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Arms the fault for the next command matching `match`; resolves (with its words) once its
   * reply was dropped and the connection closed.
   */
  strikeOnce(match: CommandMatcher, options: { pauseAfterCut?: boolean; dropPipeline?: boolean } = {}): Promise<string[]> {
    return new Promise((resolve) => {
      this.strike = {
        match,
        pauseAfterCut: options.pauseAfterCut ?? false,
        dropPipeline: options.dropPipeline ?? false,
        resolve,
      };
    });
  }

  /** Ends a pause: waiting and new connections go to `targetPort` (when given). */
  restore(targetPort?: number): void {
    if (targetPort !== undefined) {
      this.targetPort = targetPort;
    }
    this.paused = false;
    for (const { client, pending } of this.waiting.splice(0)) {
      this.forward(client, pending);
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    for (const { client } of this.waiting.splice(0)) {
      client.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (!this.paused) {
      this.forward(client, []);
      return;
    }
    const entry = { client, pending: [] as Buffer[] };
    this.waiting.push(entry);
    client.on('data', (chunk: Buffer) => {
      if (this.waiting.includes(entry)) {
        entry.pending.push(chunk);
      }
    });
  }

  private forward(client: Socket, pending: Buffer[]): void {
    if (client.destroyed) {
      return;
    }
    client.removeAllListeners('data');
    const upstream = createConnection(this.targetPort, '127.0.0.1');
    this.sockets.add(upstream);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', cut);
    client.on('close', () => upstream.destroy());

    let fromClient: Buffer = Buffer.alloc(0);
    let fromServer: Buffer = Buffer.alloc(0);
    let sent = 0;
    let replied = 0;
    // The ordinal of the struck command on this connection, the first reply dropped, the strike.
    let target: { ordinal: number; dropFrom: number; words: string[]; strike: Strike } | null = null;

    const onClientData = (chunk: Buffer): void => {
      if (target) {
        return; // the connection is doomed: nothing after the struck command reaches the server
      }
      fromClient = fromClient.length ? Buffer.concat([fromClient, chunk]) : chunk;
      let pos = 0;
      for (let value = readResp(fromClient, pos); value; value = readResp(fromClient, pos)) {
        const words = (value.words ?? []).map((w, i) => (i === 0 ? w.toUpperCase() : w));
        upstream.write(fromClient.subarray(pos, value.end));
        pos = value.end;
        if (this.strike && this.strike.match(words)) {
          const strike = this.strike;
          target = { ordinal: sent, dropFrom: strike.dropPipeline ? replied : sent, words, strike };
          this.strike = null;
          sent++;
          return;
        }
        sent++;
      }
      fromClient = fromClient.subarray(pos);
    };

    upstream.on('data', (chunk: Buffer) => {
      // Only whole replies are passed on, so that the struck one can be held back.
      fromServer = fromServer.length ? Buffer.concat([fromServer, chunk]) : chunk;
      let pos = 0;
      let deliver = 0;
      for (let value = readResp(fromServer, pos); value; value = readResp(fromServer, pos)) {
        if (target && replied === target.ordinal) {
          // The struck command's reply: dropped, and the connection cut (the replies before it
          // still delivered: end, not destroy, flushes them first).
          const { strike, words } = target;
          if (strike.pauseAfterCut) {
            this.paused = true;
          }
          upstream.removeAllListeners('close');
          upstream.on('close', () => this.sockets.delete(upstream));
          upstream.destroy();
          client.end(fromServer.subarray(0, deliver));
          strike.resolve(words);
          return;
        }
        pos = value.end;
        if (!target || replied < target.dropFrom) {
          deliver = pos;
        }
        replied++;
      }
      // Replies held back (dropFrom..ordinal) are consumed and never delivered.
      client.write(fromServer.subarray(0, deliver));
      fromServer = fromServer.subarray(pos);
    });

    client.on('data', onClientData);
    for (const chunk of pending) {
      onClientData(chunk);
    }
  }
}
