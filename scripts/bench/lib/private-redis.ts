import { spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './proc';

/** A redis-server of the bench's own: a free loopback port, no persistence; `stop` kills it. */
export interface PrivateRedis {
  port: number;
  stop: () => void;
}

/** Starts one and resolves once it answers PING. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const stop = (): void => {
    server.kill('SIGKILL');
  };
  try {
    await waitForServer(port);
  } catch (err) {
    stop();
    throw err;
  }
  return { port, stop };
}

/** Until the new server answers PING (a fresh client per attempt). */
async function waitForServer(port: number): Promise<void> {
  for (let i = 0; ; i++) {
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (err) {
      if (i > 50) {
        throw err;
      }
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      probe.disconnect();
    }
  }
}
