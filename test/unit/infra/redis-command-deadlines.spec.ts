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

/** ioredis's Deque (denque), the calls the watchdog may make. */
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
  peekBack(): T | undefined {
    return this.items[this.items.length - 1];
  }
  peekAt(index: number): T | undefined {
    return this.items[index];
  }
  shift(): T | undefined {
    return this.items.shift();
  }
}

/** An explicit pipeline's (or a transaction's) stream: every command of it carries the same one. */
type PipelineStream = { isPipeline: true };

interface Item {
  command: FakeCommand;
  stream?: PipelineStream;
}

/** One ioredis connection as the watchdog sees it: its status, two queues, its stream. */
class FakeConnection extends EventEmitter {
  status = 'ready';
  /** False once the socket was ended (half-closed) or destroyed: commands then wait offline. */
  writable = true;
  readonly options = { host: '127.0.0.1', port: 6399 };
  offlineQueue = new Deque<Item>();
  readonly commandQueue = new Deque<Item>();
  destroyed = 0;
  readonly stream = { destroy: () => this.destroyed++ };

  /** As ioredis: written when ready, or (its handshake) while connecting; else the offline queue. */
  sendCommand(c: FakeCommand, stream?: PipelineStream): Promise<unknown> {
    const writable = (this.status === 'ready' && this.writable) || (this.status === 'connect' && c.name === 'info' && !stream);
    (writable ? this.commandQueue : this.offlineQueue).push({ command: c, stream });
    return c.promise;
  }

  /** As ioredis at 'ready': the offline queue is replaced by a new one and its items sent again. */
  becomeReady(): void {
    this.status = 'ready';
    this.writable = true;
    const waiting = this.offlineQueue;
    this.offlineQueue = new Deque<Item>();
    this.emit('ready');
    for (let item = waiting.shift(); item; item = waiting.shift()) {
      void this.sendCommand(item.command, item.stream);
    }
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

/**
 * The same watchdog on a fake clock (timers and performance.now), with a bound of 400 ms: it
 * checks every 100 ms. What these show does not depend on how loaded the machine is.
 */
describe('boundCommands on a fake clock', () => {
  const BOUND = 400;
  let conn: FakeConnection;
  const settled = new Map<FakeCommand, string>();

  function send(name: string, stream?: PipelineStream): FakeCommand {
    const c = command(name);
    c.promise.then(
      () => settled.set(c, 'answered'),
      (err: Error) => settled.set(c, err.message),
    );
    void conn.sendCommand(c, stream);
    return c;
  }

  const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);
  const inOffline = (c: FakeCommand) => conn.offlineQueue.items.some((i) => i.command === c);
  const written = (c: FakeCommand) => conn.commandQueue.items.some((i) => i.command === c);

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    jest.useFakeTimers();
    settled.clear();
    conn = new FakeConnection();
    boundCommands(conn.asRedis, BOUND);
  });

  afterEach(() => {
    conn.emit('end');
    jest.useRealTimers();
  });

  it('adds nothing to the path of a command: sendCommand is left as ioredis made it', () => {
    const other = new FakeConnection();
    const send = other.sendCommand;
    boundCommands(other.asRedis, BOUND);
    expect(other.sendCommand).toBe(send);
    other.emit('end');
  });

  it.each([
    ['reconnecting', 'reconnecting', true],
    ['ready but half-closed (a demoted peer that never closes)', 'ready', false],
  ])(
    'fails a pipeline waiting for a connection (%s) as a whole, never split by its deadline, even when its commands reached the queue on either side of a check',
    async (_what, status, writable) => {
      conn.status = status;
      conn.writable = writable;
      const pipeline: PipelineStream = { isPipeline: true };
      const x = send('lpop', pipeline);
      await advance(250);
      const y = send('lpop', pipeline);
      const lone = send('get');
      let yWaitingWhenXFailed: boolean | undefined;
      void x.promise.catch(() => (yWaitingWhenXFailed = inOffline(y)));
      await advance(BOUND + 300);
      expect(settled.get(x)).toMatch(/unreachable did not answer within 400 ms/);
      expect(yWaitingWhenXFailed).toBe(false);
      expect(settled.get(y)).toMatch(/did not answer within 400 ms/);
      if (status === 'ready') {
        // A connection that says it is ready and cannot write is dropped, so that it reconnects.
        expect(conn.destroyed).toBeGreaterThanOrEqual(1);
      }
      conn.becomeReady();
      // Nothing of the pipeline is written after the reconnect: a part of it would be written
      // never (ioredis writes a pipeline once all its commands arrived) yet wait for a reply.
      expect(written(x) || written(y)).toBe(false);
      if (!settled.has(lone)) {
        expect(written(lone)).toBe(true);
      }
    },
  );

  it('after a connection was dropped as silent, the commands that waited behind it fail at the next check, not a bound later', async () => {
    const first = send('lpop');
    await advance(BOUND + 2 * 100);
    expect(settled.get(first)).toMatch(/at 127\.0\.0\.1:6399 did not answer within 400 ms/);
    expect(conn.destroyed).toBe(1);
    // ioredis: the stream is gone, the connection reconnects; an auto-pipeline held back behind the
    // silent command is sent now and waits for a connection.
    conn.status = 'reconnecting';
    conn.writable = false;
    const heldBack = send('lpop');
    await advance(100);
    expect(settled.get(heldBack)).toMatch(/did not answer within 400 ms/);
    // Once connected again, a later loss (a closed connection, not a silent one) lets commands wait
    // for the reconnect up to the bound.
    conn.becomeReady();
    conn.status = 'reconnecting';
    conn.writable = false;
    const later = send('get');
    await advance(2 * 100);
    expect(settled.has(later)).toBe(false);
    await advance(BOUND);
    expect(settled.get(later)).toMatch(/unreachable did not answer within 400 ms/);
  });

  it('measures a connection by its oldest unanswered command: one that answers each of them within the bound is not dropped', async () => {
    const commands = [send('get'), send('get'), send('get')];
    for (const c of commands) {
      await advance(BOUND - 100);
      expect(settled.has(c)).toBe(false);
      conn.reply('v');
    }
    await advance(0);
    expect(commands.map((c) => settled.get(c))).toEqual(['answered', 'answered', 'answered']);
    expect(conn.destroyed).toBe(0);
  });

  it('a frozen server: every command fails within the bound and two checks of being issued, and the connection is dropped', async () => {
    const first = send('lpop');
    await advance(150);
    const second = send('lpop');
    await advance(BOUND + 2 * 100 - 150);
    expect(settled.get(first)).toMatch(/did not answer/);
    expect(settled.get(second)).toMatch(/did not answer/);
    expect(conn.destroyed).toBe(1);
  });
});
