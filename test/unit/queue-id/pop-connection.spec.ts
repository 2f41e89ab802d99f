import { Logger } from '@nestjs/common';
import { AddressInfo, Server, Socket, createServer } from 'node:net';
import { PopConnection } from '../../../src/queue-id/redis/pop-connection';

/**
 * The pop connection against a scripted server (no Redis): what it writes, and what it does
 * with replies that are cut, broken or refused. Each connection the server accepts gets the next
 * script: a function of the bytes received so far that answers (or closes).
 */
type Script = (socket: Socket, received: string) => void;

class ScriptedServer {
  readonly connections: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly scripts: Script[],
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      const script = this.scripts.shift();
      const n = this.connections.push('') - 1;
      socket.on('data', (chunk: Buffer) => {
        this.connections[n] += chunk.toString('latin1');
        script?.(socket, this.connections[n]);
      });
    });
  }

  static async start(scripts: Script[]): Promise<ScriptedServer> {
    const s = new ScriptedServer(createServer(), scripts);
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const LPOP_LLEN = '*3\r\n$4\r\nLPOP\r\n$1\r\nk\r\n$1\r\n3\r\n*2\r\n$4\r\nLLEN\r\n$1\r\nk\r\n';
const POP_REPLY = '*3\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n';
const PING = '*1\r\n$4\r\nPING\r\n';

/** Answers once the whole request arrived. */
const when =
  (request: string, reply: (socket: Socket) => void): Script =>
  (socket, received) => {
    if (received.endsWith(request)) {
      reply(socket);
    }
  };

describe('PopConnection (the pop connection)', () => {
  let server: ScriptedServer | undefined;
  let pop: PopConnection | undefined;

  beforeAll(() => {
    // The connection's warnings ("pop connection lost") are expected here.
    Logger.overrideLogger(false);
  });

  afterEach(async () => {
    await pop?.close();
    await server?.close();
    pop = undefined;
    server = undefined;
  });

  const endpoint = (port: number, extra: Partial<{ username: string; password: string; db: number }> = {}) => ({
    host: '127.0.0.1',
    port,
    tls: false,
    db: 0,
    ...extra,
  });

  it('writes AUTH and SELECT first and the pops only once both answered OK; reads the reply into indexes', async () => {
    const handshake = '*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$3\r\np w\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n';
    server = await ScriptedServer.start([
      (s, received) => {
        if (received === handshake) {
          s.write('+OK\r\n+OK\r\n');
        } else if (received === handshake + LPOP_LLEN) {
          s.write(`${POP_REPLY}:5\r\n`);
        }
      },
    ]);
    pop = new PopConnection(endpoint(server.port, { username: 'u', password: 'p w', db: 3 }), 2000);
    expect(await pop.pop('k', 3, 8n, true)).toEqual({ indexes: [7, 8], overLimit: true, malformed: 0, length: 5 });
    expect(server.connections).toEqual([handshake + LPOP_LLEN]);
  });

  it('a failing SELECT fails the pops without ever writing them (they would run on database 0)', async () => {
    const select = '*2\r\n$6\r\nSELECT\r\n$2\r\n99\r\n';
    server = await ScriptedServer.start([when(select, (s) => s.write('-ERR DB index is out of range\r\n'))]);
    pop = new PopConnection(endpoint(server.port, { db: 99 }), 2000);
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(/SELECT failed: ERR DB index is out of range/);
    expect(server.connections).toEqual([select]);
  });

  it('an AUTH refused because Redis needs no password is ignored (as the ioredis client does)', async () => {
    const auth = '*2\r\n$4\r\nAUTH\r\n$1\r\nx\r\n';
    server = await ScriptedServer.start([
      (s, received) => {
        if (received === auth) {
          s.write('-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n');
        } else if (received === auth + LPOP_LLEN) {
          s.write(`${POP_REPLY}:0\r\n`);
        }
      },
    ]);
    pop = new PopConnection(endpoint(server.port, { password: 'x' }), 2000);
    expect(await pop.pop('k', 3, 100n, true)).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 0 });
  });

  it('pops of one event-loop turn go out in one write, their replies matched in order', async () => {
    const two = LPOP_LLEN + LPOP_LLEN;
    server = await ScriptedServer.start([when(two, (s) => s.write(`${POP_REPLY}:3\r\n*1\r\n$2\r\n10\r\n:2\r\n`))]);
    pop = new PopConnection(endpoint(server.port), 2000);
    const [a, b] = await Promise.all([pop.pop('k', 3, 100n, true), pop.pop('k', 3, 100n, true)]);
    expect(a).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 3 });
    expect(b).toEqual({ indexes: [10], overLimit: false, malformed: 0, length: 2 });
  });

  it('a reply cut mid-way fails the pop; the next pop connects again and never resends', async () => {
    server = await ScriptedServer.start([
      when(LPOP_LLEN, (s) => s.end('*3\r\n$1\r\n7\r\n$1')),
      when(LPOP_LLEN, (s) => s.write(`${POP_REPLY}:0\r\n`)),
    ]);
    pop = new PopConnection(endpoint(server.port), 2000);
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(/connection closed/);
    expect(await pop.pop('k', 3, 100n, true)).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 0 });
    // Each connection carried its own request once.
    expect(server.connections).toEqual([LPOP_LLEN, LPOP_LLEN]);
  });

  it('garbage after a whole pop reply fails that pop too (its entries are a gap), and every pop waiting', async () => {
    server = await ScriptedServer.start([when(LPOP_LLEN + LPOP_LLEN, (s) => s.write(`${POP_REPLY}+OK\r\n`))]);
    pop = new PopConnection(endpoint(server.port), 2000);
    const results = await Promise.allSettled([pop.pop('k', 3, 100n, true), pop.pop('k', 3, 100n, true)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/RespProtocolError/);
  });

  it('an error reply fails its pop only; an error reply to LLEN leaves the length unknown', async () => {
    server = await ScriptedServer.start([
      when(LPOP_LLEN + LPOP_LLEN, (s) => s.write(`-WRONGTYPE wrong kind\r\n:0\r\n${POP_REPLY}-LOADING busy\r\n`)),
    ]);
    pop = new PopConnection(endpoint(server.port), 2000);
    const [a, b] = await Promise.allSettled([pop.pop('k', 3, 100n, true), pop.pop('k', 3, 100n, true)]);
    expect(a.status === 'rejected' && String(a.reason)).toMatch(/WRONGTYPE/);
    expect(b.status === 'fulfilled' && b.value).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: -1 });
  });

  it('a refused AUTH drops the connection and fails the pops waiting for it (never written); then backs off', async () => {
    const auth = '*2\r\n$4\r\nAUTH\r\n$1\r\nx\r\n';
    server = await ScriptedServer.start([when(auth, (s) => s.write('-WRONGPASS invalid username-password pair\r\n'))]);
    pop = new PopConnection(endpoint(server.port, { password: 'x' }), 2000);
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(/AUTH failed: WRONGPASS/);
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(/unavailable/);
    expect(server.connections).toEqual([auth]);
  });

  it('a closed instance refuses pops', async () => {
    server = await ScriptedServer.start([]);
    pop = new PopConnection(endpoint(server.port), 2000);
    await pop.close();
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(/closed/);
  });

  it('a silent server (frozen, black-holed) fails the pop within its deadline and drops the connection; the next pop connects again', async () => {
    server = await ScriptedServer.start([
      () => undefined, // accepts and never answers
      when(LPOP_LLEN, (s) => s.write(`${POP_REPLY}:0\r\n`)),
    ]);
    pop = new PopConnection(endpoint(server.port), 200);
    const started = Date.now();
    const results = await Promise.allSettled([pop.pop('k', 3, 100n, true), pop.pop('k', 3, 100n, true)]);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/did not answer within 200 ms/);
    // Not resent: the silent connection got both pops once; the next pop went over a new connection.
    expect(await pop.pop('k', 3, 100n, true)).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 0 });
    expect(server.connections).toEqual([LPOP_LLEN + LPOP_LLEN, LPOP_LLEN]);
  });

  it('PING connects when there is no connection, and goes in turn with the pops on it', async () => {
    server = await ScriptedServer.start([
      (s, received) => {
        if (received === PING) {
          s.write('+PONG\r\n');
        } else if (received === PING + LPOP_LLEN + PING) {
          s.write(`${POP_REPLY}:0\r\n+PONG\r\n`);
        }
      },
    ]);
    pop = new PopConnection(endpoint(server.port), 2000);
    await expect(pop.ping()).resolves.toBeUndefined();
    const [popped] = await Promise.all([pop.pop('k', 3, 100n, true), pop.ping()]);
    expect(popped).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 0 });
    expect(server.connections).toEqual([PING + LPOP_LLEN + PING]);
  });

  it('a PING not answered fails within the deadline and drops the connection with the pops waiting on it', async () => {
    server = await ScriptedServer.start([() => undefined]);
    pop = new PopConnection(endpoint(server.port), 200);
    const started = Date.now();
    const results = await Promise.allSettled([pop.pop('k', 3, 100n, true), pop.ping()]);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/did not answer within 200 ms/);
  });

  it('a PING against nothing listening fails naming the connection error, then again while backing off', async () => {
    server = await ScriptedServer.start([]);
    const port = server.port;
    await server.close();
    server = undefined;
    pop = new PopConnection(endpoint(port), 2000);
    await expect(pop.ping()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Backing off (or, on a stalled machine, refused again): either way the cause is named.
    await expect(pop.ping()).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a handshake that is never answered is abandoned within the deadline', async () => {
    server = await ScriptedServer.start([() => undefined]);
    pop = new PopConnection(endpoint(server.port, { password: 'x' }), 200);
    const started = Date.now();
    await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.each(['READONLY You can\'t write against a read only replica.', 'MASTERDOWN Link with MASTER is down'])(
    'a demoted node (%s) fails the pop and drops the connection: the next pop connects again (a moved name is followed)',
    async (reply) => {
      server = await ScriptedServer.start([
        when(LPOP_LLEN, (s) => s.write(`-${reply}\r\n:7\r\n`)),
        when(LPOP_LLEN, (s) => s.write(`${POP_REPLY}:0\r\n`)),
      ]);
      pop = new PopConnection(endpoint(server.port), 2000);
      await expect(pop.pop('k', 3, 100n, true)).rejects.toThrow(reply.split(' ')[0]);
      expect(await pop.pop('k', 3, 100n, true)).toEqual({ indexes: [7, 8, 9], overLimit: false, malformed: 0, length: 0 });
      expect(server.connections).toEqual([LPOP_LLEN, LPOP_LLEN]);
    },
  );
});
