import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { RedisCommandTimeoutError, boundCommands } from '../../../src/infra/redis/command-deadlines';

interface FakeCommand {
  name: string;
  promise: Promise<unknown>;
  resolve(v: unknown): void;
  reject(err: Error): void;
}

function command(name: string): FakeCommand {
  const c = { name } as FakeCommand;
  c.promise = new Promise((resolve, reject) => {
    c.resolve = resolve;
    c.reject = reject;
  });
  c.promise.catch(() => undefined);
  return c;
}

class Deque<T> {
  readonly items: T[] = [];
  get length(): number {
    return this.items.length;
  }
  push(item: T): void {
    this.items.push(item);
  }
  peekFront(): T | undefined {
    return this.items[0];
  }
  shift(): T | undefined {
    return this.items.shift();
  }
}

/** One ioredis connection as the watchdog sees it: its status, two queues, its stream. */
class FakeConnection extends EventEmitter {
  status = 'ready';
  readonly options = { host: '127.0.0.1', port: 6399 };
  readonly offlineQueue = new Deque<{ command: FakeCommand }>();
  readonly commandQueue = new Deque<{ command: FakeCommand }>();
  destroyed = 0;
  readonly stream = { destroy: () => this.destroyed++ };

  /** As ioredis: written when ready, or (its handshake) while connecting; else the offline queue. */
  sendCommand(c: FakeCommand): Promise<unknown> {
    const writable = this.status === 'ready' || (this.status === 'connect' && c.name === 'info');
    (writable ? this.commandQueue : this.offlineQueue).push({ command: c });
    return c.promise;
  }

  /** The reply to the oldest written command. */
  reply(value: unknown): void {
    this.commandQueue.shift()?.command.resolve(value);
  }

  get asRedis(): Redis {
    return this as unknown as Redis;
  }
}

const TIMEOUT = 60;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('boundCommands (every Redis command bounded, never sent late)', () => {
  let conn: FakeConnection;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    conn = new FakeConnection();
    boundCommands(conn.asRedis, TIMEOUT);
  });

  afterEach(() => {
    conn.emit('end');
  });

  it('fails every command of a silent connection with a timeout and destroys the connection', async () => {
    const pop = command('lpop');
    const push = command('rpush');
    const started = Date.now();
    void conn.asRedis.sendCommand(pop as never);
    void conn.asRedis.sendCommand(push as never);
    await expect(pop.promise).rejects.toBeInstanceOf(RedisCommandTimeoutError);
    await expect(push.promise).rejects.toThrow(/did not answer within 60 ms: the command may or may not have run/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(conn.commandQueue.length).toBe(0);
    expect(conn.destroyed).toBe(1);
  });

  it('leaves a connection that answers in time alone', async () => {
    const get = command('get');
    void conn.asRedis.sendCommand(get as never);
    await sleep(TIMEOUT / 3);
    conn.reply('v');
    await expect(get.promise).resolves.toBe('v');
    await sleep(TIMEOUT * 3);
    expect(conn.destroyed).toBe(0);
  });

  it('fails a command still waiting for a connection at its deadline and takes it out of the offline queue (never written later)', async () => {
    conn.status = 'reconnecting';
    const pop = command('lpop');
    void conn.asRedis.sendCommand(pop as never);
    expect(conn.offlineQueue.length).toBe(1);
    await expect(pop.promise).rejects.toThrow(/unreachable did not answer within 60 ms/);
    expect(conn.offlineQueue.length).toBe(0);
    // Not a written command: the connection is not destroyed for it.
    expect(conn.destroyed).toBe(0);
  });

  it('during a handshake that is never answered, destroys the connection and leaves its commands to ioredis', async () => {
    conn.status = 'connect';
    const info = command('info');
    void conn.asRedis.sendCommand(info as never);
    let settled = false;
    info.promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await sleep(TIMEOUT * 4);
    expect(conn.destroyed).toBeGreaterThanOrEqual(1);
    expect(settled).toBe(false);
  });
});
