import { Logger } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { forEachConnection } from './connection-events';
import { RedisClient } from './redis.tokens';

/** A command that Redis did not answer in time: it may or may not have run, and it is never sent again. */
export class RedisCommandTimeoutError extends Error {
  constructor(timeoutMs: number, where: string) {
    super(`Redis ${where} did not answer within ${timeoutMs} ms: the command may or may not have run`);
    this.name = 'RedisCommandTimeoutError';
  }
}

/** When a command was first handed to a connection (or to the Cluster): its deadline runs from there. */
const SENT_AT = Symbol('sentAt');

interface TimedCommand {
  [SENT_AT]?: number;
  reject(err: Error): void;
}

/** ioredis's queues (a Deque): the oldest item at the front. */
interface CommandDeque {
  readonly length: number;
  peekFront(): { command: TimedCommand } | undefined;
  shift(): { command: TimedCommand } | undefined;
}

/** The ioredis internals read here (the existing connection guards read commandQueue too). */
interface Watched {
  readonly status: string;
  readonly offlineQueue: CommandDeque;
  readonly commandQueue?: CommandDeque;
  readonly stream?: { destroy(): void };
  readonly options: { host?: string; port?: number };
  sendCommand(...args: unknown[]): unknown;
}

/**
 * Bounds every command of an ioredis client (standalone, Sentinel, each node of a Cluster and the
 * Cluster's own queue) to `timeoutMs` from the moment it is issued, whatever Redis does: frozen
 * (SIGSTOP, a VM pause), black-holed (a peer that accepts and never answers), or unreachable.
 *
 * Why not ioredis's own `commandTimeout`: a command that timed out while waiting in the offline
 * queue is still written when the connection comes back (ioredis #2130) — a pop or push the
 * caller already gave up on, run later; and a written command that timed out leaves its connection
 * in use, so every later command waits behind it. Here, one watchdog per client checks the oldest
 * command of each queue a few times per timeout:
 * - a command waiting for a connection (offline queue) past its deadline fails and leaves the
 *   queue: it is never written;
 * - a connection whose oldest unanswered command is past its deadline is silent: every command
 *   waiting on it fails with RedisCommandTimeoutError and the connection is destroyed; ioredis
 *   connects again (retryStrategy) and, with `autoResendUnfulfilledCommands: false`, sends none of
 *   them again (unanswered-commands.ts).
 * Before failing a connection the watchdog lets the event loop read what already arrived (one
 * setImmediate): a reply that came during a long event-loop stall is not taken for silence.
 * Costs per command: one timestamp.
 */
export function boundCommands(client: RedisClient, timeoutMs: number): void {
  const logger = new Logger('Redis');
  const watched = new Set<Watched>();
  const silent = new WeakSet<Watched>();
  const watch = (conn: Watched): void => {
    stampOnSend(conn);
    watched.add(conn);
  };
  forEachConnection(client, (redis) => {
    const conn = redis as unknown as Watched;
    watch(conn);
    redis.on('ready', () => silent.delete(conn));
    redis.on('end', () => watched.delete(conn));
  });
  if (client instanceof Cluster) {
    // Commands wait in the Cluster's own queue while it (re)discovers its slots.
    watch(client as unknown as Watched);
  }

  const overdue = (item: { command: TimedCommand } | undefined, now: number): boolean =>
    item !== undefined && now - (item.command[SENT_AT] ?? now) >= timeoutMs;

  const dropSilent = (conn: Watched): void => {
    const where = `${conn.options.host ?? '?'}:${conn.options.port ?? '?'}`;
    if (!silent.has(conn)) {
      silent.add(conn);
      logger.warn(`Redis at ${where} did not answer within ${timeoutMs} ms: its connection is dropped and replaced`);
    }
    // Before 'ready' only ioredis's own handshake is on the wire: it fails with the connection.
    if (conn.status === 'ready' && conn.commandQueue) {
      for (let item = conn.commandQueue.shift(); item; item = conn.commandQueue.shift()) {
        item.command.reject(new RedisCommandTimeoutError(timeoutMs, `at ${where}`));
      }
    }
    conn.stream?.destroy();
  };

  const tick = (): void => {
    const now = performance.now();
    for (const conn of watched) {
      // Never written: failed and forgotten, so the reconnect does not send it late.
      while (overdue(conn.offlineQueue.peekFront(), now)) {
        conn.offlineQueue.shift()?.command.reject(new RedisCommandTimeoutError(timeoutMs, 'unreachable'));
      }
      const head = conn.commandQueue?.peekFront();
      if (overdue(head, now)) {
        // Replies already received during a stall are read in the poll phase before this runs.
        setImmediate(() => {
          if (conn.commandQueue?.peekFront() === head) {
            dropSilent(conn);
          }
        });
      }
    }
  };
  const timer = setInterval(tick, Math.max(10, Math.min(100, Math.floor(timeoutMs / 4))));
  timer.unref();
  client.once('end', () => clearInterval(timer));
}

/** Stamps each command the first time it is handed to this connection (or Cluster). */
function stampOnSend(conn: Watched): void {
  const send = conn.sendCommand.bind(conn);
  (conn as { sendCommand: (...args: unknown[]) => unknown }).sendCommand = (...args: unknown[]) => {
    const command = args[0] as TimedCommand;
    command[SENT_AT] ??= performance.now();
    return send(...args);
  };
}
