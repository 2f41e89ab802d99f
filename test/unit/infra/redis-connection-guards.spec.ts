import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { ConnectionEpoch } from '../../../src/infra/redis/connection-epoch';
import { UNANSWERED_MESSAGE, rejectUnansweredOnClose } from '../../../src/infra/redis/unanswered-commands';

/** A stand-in for one ioredis connection: its events and its queue of commands awaiting replies. */
class FakeConnection extends EventEmitter {
  readonly commandQueue: Array<{ command: { name: string; reject: (err: Error) => void } }> = [];
  status = 'ready';

  send(name: string): Promise<string> {
    return new Promise<string>((_, reject) => this.commandQueue.push({ command: { name, reject } }));
  }

  /** The queue is an array here, a Deque in ioredis: both have the shift() used. */
  get asRedis(): Redis {
    return this as unknown as Redis;
  }
}

describe('rejectUnansweredOnClose', () => {
  it('fails every command still waiting for a reply when the connection closes, so none is sent again', async () => {
    const conn = new FakeConnection();
    const pending = [conn.send('rpush'), conn.send('wait')];
    rejectUnansweredOnClose(conn.asRedis);
    conn.emit('close');
    for (const p of pending) {
      await expect(p).rejects.toThrow(UNANSWERED_MESSAGE);
    }
    // Not ioredis's "Connection is closed.", which a Cluster would retry on another node.
    expect(UNANSWERED_MESSAGE).not.toBe('Connection is closed.');
  });

  it('leaves the handshake of a connection that never became ready to ioredis (its offline queue survives)', async () => {
    const conn = new FakeConnection();
    conn.status = 'connecting';
    rejectUnansweredOnClose(conn.asRedis);
    const handshake = conn.send('info');
    let settled = false;
    handshake.catch(() => undefined).finally(() => (settled = true));
    conn.emit('close');
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    // Once ready, a later loss sweeps again.
    conn.emit('ready');
    const rpush = conn.send('rpush');
    conn.emit('close');
    await expect(rpush).rejects.toThrow(UNANSWERED_MESSAGE);
  });
});

describe('ConnectionEpoch', () => {
  it('moves on a connection loss only', () => {
    const conn = new FakeConnection();
    const epoch = new ConnectionEpoch(conn.asRedis);
    const before = epoch.value;
    for (const event of ['connect', 'ready', 'reconnecting']) {
      conn.emit(event);
    }
    expect(epoch.value).toBe(before);
    conn.emit('close');
    expect(epoch.value).toBe(before + 1);
    conn.emit('end');
    expect(epoch.value).toBe(before + 2);
  });
});
