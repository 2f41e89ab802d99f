import { Logger } from '@nestjs/common';
import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';
import * as perfHooks from 'node:perf_hooks';
import { createRedisClient } from '../../../src/infra/redis/redis-client.factory';
import { RedisClient } from '../../../src/infra/redis/redis.tokens';
import { OwnRedisServer } from '../../support/redis-server';

/**
 * A pipeline waiting in ioredis's offline queue while the connection comes back is failed as a
 * whole or sent as a whole. ioredis writes an explicit pipeline only once every one of its
 * commands reached the connection; were the bound to fail the first command of a pipeline and leave
 * the second queued, the reconnect would send the second without writing its bytes, yet queue it
 * for a reply: it would take the reply of the next command sent, and a request would get another
 * list's index (a duplicate). The reviewer's reproduction: a proxy that holds a reconnect's bytes
 * for 250 ms, and a clock that makes the pipeline's commands look 600 ms apart (on a loaded machine
 * an event-loop stall between two of them).
 */
class DelayingProxy {
  private readonly sockets = new Set<Socket>();
  /** New connections pass bytes only this long after they were accepted. */
  delayMs = 0;

  private constructor(private readonly server: Server) {}

  static async start(targetPort: number): Promise<DelayingProxy> {
    const server = createServer();
    const proxy = new DelayingProxy(server);
    server.on('connection', (client) => proxy.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = createConnection(targetPort, '127.0.0.1');
    const opensAt = Date.now() + this.delayMs;
    const relay = (from: Socket, to: Socket): void => {
      from.on('data', (data) => {
        const wait = opensAt - Date.now();
        if (wait > 0) {
          setTimeout(() => to.write(data), wait);
        } else {
          to.write(data);
        }
      });
    };
    relay(client, upstream);
    relay(upstream, client);
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', kill);
      s.on('close', kill);
    }
  }

  /** Every open connection cut (the client reconnects). */
  cutAll(): void {
    for (const s of this.sockets) {
      s.destroy();
    }
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

type Outcome = string | null | { error: string };

describe('a pipeline waiting for a Redis connection', () => {
  let redis: OwnRedisServer;
  let proxy: DelayingProxy;
  let client: RedisClient;
  const clocks = [perfHooks.performance, globalThis.performance];
  const realNows = clocks.map((c) => c.now);

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    redis = await OwnRedisServer.start();
    proxy = await DelayingProxy.start(redis.port);
    client = createRedisClient({
      url: `redis://127.0.0.1:${proxy.port}/0`,
      keyPrefix: 'split.',
      commandTimeoutMs: 500,
      topology: { kind: 'standalone' },
    });
  });

  afterAll(async () => {
    clocks.forEach((c, i) => (c.now = realNows[i]));
    client.disconnect();
    await proxy.close();
    await redis.destroy();
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
  });

  it('is never split across a reconnect: no request gets the reply meant for another', async () => {
    await client.rpush('kX', 'x-1');
    await client.rpush('kY', 'y-1');
    await client.rpush('kC', 'c-1');

    proxy.delayMs = 250;
    const closed = new Promise((resolve) => client.once('close', resolve));
    proxy.cutAll();
    await closed;
    // The next clock read is 600 ms behind (a stall between the pipeline's two commands).
    const skews = [-600];
    clocks.forEach((c, i) => {
      const real = realNows[i].bind(c);
      c.now = () => real() + (skews.shift() ?? 0);
    });
    const outcome = (p: Promise<unknown>): Promise<Outcome> =>
      p.then(
        (v) => v as string | null,
        (err: Error) => ({ error: err.message }),
      );
    const pipeline = client
      .pipeline()
      .lpop('kX')
      .lpop('kY')
      .exec()
      .then((replies) => (replies ?? []).map(([err, v]): Outcome => (err ? { error: err.message } : (v as string | null))));
    await new Promise((resolve) => setTimeout(resolve, 150));
    await new Promise((resolve) => client.once('ready', resolve));
    // Another request's pop, written after the reconnect.
    const c = await outcome(client.lpop('kC'));
    const [x, y] = await pipeline;
    clocks.forEach((clock, i) => (clock.now = realNows[i]));

    const ownOrError = (got: Outcome | undefined, own: string): boolean => got === own || (typeof got === 'object' && got !== null);
    expect({ x, y, c, xOk: ownOrError(x, 'x-1'), yOk: ownOrError(y, 'y-1'), cOk: ownOrError(c, 'c-1') }).toMatchObject({
      xOk: true,
      yOk: true,
      cOk: true,
    });
    // The pipeline failed or went out as a whole.
    expect(typeof x === 'object').toBe(typeof y === 'object');
    // What was not handed out is still in its list: nothing popped without its reply.
    const left = await Promise.all(['kX', 'kY', 'kC'].map((k) => client.lrange(k, 0, -1)));
    expect(left).toEqual([x === 'x-1' ? [] : ['x-1'], y === 'y-1' ? [] : ['y-1'], c === 'c-1' ? [] : ['c-1']]);
  });
});
