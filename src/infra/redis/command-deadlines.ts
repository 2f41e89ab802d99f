import { Logger } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { forEachConnection } from './connection-events';
import { RedisClient } from './redis.tokens';

/** A command that Redis did not answer in time: it may or may not have run, and it is never sent again. */
export class RedisCommandTimeoutError extends Error {
  constructor(timeoutMs: number, where: string) {
    super(`Redis ${where} did not answer within ${timeoutMs} ms: the command may or may not have run`);
    this.name = 'RedisCommandTimeoutError';
  }
}

/** An entry of ioredis's queues: the command, and the explicit pipeline (or transaction) it belongs to. */
interface QueueItem {
  command: { reject(err: Error): void };
  /** Shared by every command of one explicit pipeline; undefined for a single command. */
  stream?: unknown;
}

/** ioredis's queues (a Deque, denque): the oldest item at the front. */
interface CommandDeque {
  readonly length: number;
  peekFront(): QueueItem | undefined;
  peekBack(): QueueItem | undefined;
  peekAt(index: number): QueueItem | undefined;
  shift(): QueueItem | undefined;
}

/** The ioredis internals read here (the existing connection guards read commandQueue too). */
interface Watched {
  readonly status: string;
  /** Replaced by a new Deque each time ioredis sends what waited in it: read afresh at every check. */
  readonly offlineQueue: CommandDeque;
  readonly commandQueue?: CommandDeque;
  readonly stream?: { destroy(): void };
  readonly options: { host?: string; port?: number };
}

/** What the watchdog remembers of one connection (or of a Cluster's own queue) between checks. */
interface Watch {
  readonly conn: Watched;
  /** The oldest unanswered command at the last check, and since when it has been the oldest. */
  head: QueueItem | undefined;
  headSince: number;
  /** The offline queue's last item at each check, oldest first: that item and all before it waited since then. */
  readonly marks: Array<{ item: QueueItem; at: number }>;
  /** Since when the connection has not been ready (first check that saw it so); cleared on 'ready'. */
  notReadySince: number | undefined;
  /** Dropped as silent: until it is ready again, commands waiting for it fail at the next check. */
  dropped: boolean;
}

/**
 * Bounds every command of an ioredis client (standalone, Sentinel, each node of a Cluster and the
 * Cluster's own queue) whatever Redis does: frozen (SIGSTOP, a VM pause), black-holed (a peer
 * that accepts and never answers), unreachable, or half-closed. Nothing is added to a command's
 * path: one timer per client looks at ioredis's queues a few times per `timeoutMs` (every
 * `checkEvery`), and remembers only the identity of queue items between two looks.
 *
 * - Written commands: a connection whose oldest unanswered command is still the same one a whole
 *   `timeoutMs` after a check first saw it there is silent: every command waiting on it fails with
 *   RedisCommandTimeoutError and the connection is destroyed; ioredis connects again and, with
 *   `autoResendUnfulfilledCommands: false`, sends none of them again (unanswered-commands.ts). The
 *   bound so runs from when a command became the oldest, within one check of it: a server that
 *   answers each oldest command within the bound is not taken for silent.
 * - Commands waiting for a connection (the offline queue) fail and leave the queue once they have
 *   waited `timeoutMs` (counted from the first check that saw them): they are never written later.
 *   They fail by whole pipelines only: ioredis writes an explicit pipeline when every one of its
 *   commands reached the connection, so a part of one left behind would never be written yet wait
 *   for a reply (and take another command's). A connection that has not been ready for `timeoutMs`
 *   fails everything waiting for it at each check, and one just dropped as silent does so at once
 *   (the commands that waited behind the silent one, an auto-pipeline among them, already waited):
 *   an unreachable Redis is a fast refusal. A connection that says it is ready yet leaves commands
 *   waiting past the bound (half-closed: a demoted peer that never closes after ioredis's end()) is
 *   destroyed, so that it reconnects.
 * What a request waits at most on a frozen Redis: `timeoutMs` and two checks (an auto-pipelined
 * command is handed to ioredis only when the one before it settled; that one failed within
 * `timeoutMs` and a check, and it then fails at the next check).
 *
 * Why not ioredis's own `commandTimeout`: a command that timed out while waiting in the offline
 * queue is still written when the connection comes back (docs/decisions/0018) — a pop or push the
 * caller already gave up on, run later; and a written command that timed out leaves its connection
 * in use, so every later command waits behind it.
 * Before failing a connection the watchdog lets the event loop read what already arrived (one
 * setImmediate): a reply that came during a long event-loop stall is not taken for silence.
 */
export function boundCommands(client: RedisClient, timeoutMs: number): void {
  const logger = new Logger('Redis');
  const watches = new Set<Watch>();
  const silent = new WeakSet<Watched>();
  const watch = (conn: Watched, events: { on(event: string, fn: () => void): unknown }): void => {
    const w: Watch = { conn, head: undefined, headSince: 0, marks: [], notReadySince: undefined, dropped: false };
    watches.add(w);
    events.on('ready', () => {
      silent.delete(conn);
      w.notReadySince = undefined;
      w.dropped = false;
      w.marks.length = 0;
    });
    events.on('end', () => watches.delete(w));
  };
  forEachConnection(client, (redis) => watch(redis as unknown as Watched, redis));
  if (client instanceof Cluster) {
    // Commands wait in the Cluster's own queue while it (re)discovers its slots.
    watch(client as unknown as Watched, client);
  }

  const where = (conn: Watched): string => `${conn.options.host ?? '?'}:${conn.options.port ?? '?'}`;

  const dropSilent = (w: Watch): void => {
    const conn = w.conn;
    if (!silent.has(conn)) {
      silent.add(conn);
      logger.warn(`Redis at ${where(conn)} did not answer within ${timeoutMs} ms: its connection is dropped and replaced`);
    }
    w.dropped = true;
    w.head = undefined;
    // Before 'ready' only ioredis's own handshake is on the wire: it fails with the connection.
    if (conn.status === 'ready' && conn.commandQueue) {
      for (let item = conn.commandQueue.shift(); item; item = conn.commandQueue.shift()) {
        item.command.reject(new RedisCommandTimeoutError(timeoutMs, `at ${where(conn)}`));
      }
    }
    conn.stream?.destroy();
  };

  /** Fails the first `count` offline items, and further ones while they belong to the same pipeline. */
  const failOffline = (queue: CommandDeque, count: number): void => {
    let n = Math.min(count, queue.length);
    for (let last = queue.peekAt(n - 1); n < queue.length && last?.stream !== undefined; n++) {
      const next = queue.peekAt(n);
      if (next?.stream !== last.stream) {
        break;
      }
      last = next;
    }
    for (let i = 0; i < n; i++) {
      queue.shift()?.command.reject(new RedisCommandTimeoutError(timeoutMs, 'unreachable'));
    }
  };

  /** How many offline items to fail for the marks past the bound: all up to the newest such mark's item. */
  const overdueOffline = (w: Watch, queue: CommandDeque, now: number): number => {
    let count = 0;
    while (w.marks.length > 0 && now - w.marks[0].at >= timeoutMs) {
      const { item } = w.marks.shift() as { item: QueueItem };
      // Gone already (answered, failed, or sent at a reconnect): nothing to do for it.
      for (let i = count; i < queue.length; i++) {
        if (queue.peekAt(i) === item) {
          count = i + 1;
          break;
        }
      }
    }
    return count;
  };

  const checkOffline = (w: Watch, now: number): void => {
    const conn = w.conn;
    const queue = conn.offlineQueue;
    if (conn.status !== 'ready') {
      w.notReadySince ??= now;
    }
    if (queue.length === 0) {
      w.marks.length = 0;
      return;
    }
    if (w.dropped || (w.notReadySince !== undefined && now - w.notReadySince >= timeoutMs)) {
      failOffline(queue, queue.length);
      w.marks.length = 0;
      return;
    }
    const overdue = overdueOffline(w, queue, now);
    if (overdue > 0) {
      failOffline(queue, overdue);
      if (conn.status === 'ready') {
        // Ready, yet it cannot write: half-closed. Destroyed, it reconnects.
        conn.stream?.destroy();
      }
    }
    const tail = queue.peekBack();
    if (tail !== undefined && w.marks[w.marks.length - 1]?.item !== tail) {
      w.marks.push({ item: tail, at: now });
    }
  };

  const checkWritten = (w: Watch, now: number): void => {
    const head = w.conn.commandQueue?.peekFront();
    if (head !== w.head) {
      w.head = head;
      w.headSince = now;
      return;
    }
    if (head !== undefined && now - w.headSince >= timeoutMs) {
      // Replies already received during a stall are read in the poll phase before this runs.
      setImmediate(() => {
        if (w.conn.commandQueue?.peekFront() === head && watches.has(w)) {
          dropSilent(w);
        }
      });
    }
  };

  const tick = (): void => {
    const now = performance.now();
    for (const w of watches) {
      checkWritten(w, now);
      checkOffline(w, now);
    }
  };
  const timer = setInterval(tick, checkEvery(timeoutMs));
  timer.unref();
  client.once('end', () => clearInterval(timer));
}

/** How often the watchdog looks at the queues: a quarter of the bound, between 10 and 100 ms. */
export function checkEvery(timeoutMs: number): number {
  return Math.max(10, Math.min(100, Math.floor(timeoutMs / 4)));
}
