import { Logger } from '@nestjs/common';
import { Exception } from 'node-zookeeper-client';

/**
 * Makes node-zookeeper-client survive malformed frames from the server.
 *
 * The library parses the server's stream in its socket 'data' handler, and every parse error
 * (`Unknown code: <n>`, `offset: n is out of buffer range`, `Unknown event type`, …) was thrown out
 * of that handler: uncaught, it ended the whole process. The usual way to get there: a connection
 * cut mid-frame left the half frame in `pendingBuffer`, which the library kept and glued to the
 * first bytes of the next connection (the chaos suite's partition past the lease, 2 runs in 5).
 * Other holes: a length prefix of 0 or below, or one of up to 2 GiB that it buffered for ever; a
 * reply it dropped (xid out of order) whose caller was never answered.
 *
 * Wraps three methods of the library's ConnectionManager, once, at load, so that on a bad frame:
 * the connection is dropped (the library reconnects on the same session), every pending call
 * fails with CONNECTION_LOSS (outcome unknown, as on any lost connection), and the process lives.
 * - onSocketData: refuses a frame length outside [16 B, 16 MiB]; catches whatever parsing throws;
 *   a reply taken off the pending queue and never answered is failed; a zxid taken from the
 *   bad frame is put back (a client that claims a zxid the server never had is refused by it).
 * - onSocketClosed / onSocketConnected: a new connection starts with an empty frame buffer.
 *
 * Written against node-zookeeper-client 1.1.3 (pinned in package.json); any other version stops
 * the service at start so that this file is checked against it first.
 */

const GUARDED_VERSION = '1.1.3';
/** A reply header (xid, zxid, err) is 16 bytes; the connect response is longer. */
const MIN_FRAME_BYTES = 16;
/** Far above any reply this service gets (ZooKeeper's jute.maxbuffer is 1 MiB by default). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

type Callback = (err: unknown, ...rest: unknown[]) => void;

interface Packet {
  callback?: Callback;
}

/** The parts of the library's ConnectionManager the guard uses. */
interface Manager {
  socket?: { destroy(): void };
  pendingBuffer: Buffer | null;
  pendingQueue: Packet[];
  zxid: Buffer;
  onSocketData: (this: Manager, chunk: Buffer) => void;
  onSocketClosed: (this: Manager, hadError: boolean) => void;
  onSocketConnected: (this: Manager) => void;
}

const logger = new Logger('ZookeeperClient');
/** Packets whose callback the guard has wrapped, and those whose callback has run. */
const tracked = new WeakSet<Packet>();
const answered = new WeakSet<Packet>();
let installed = false;

/** The length prefix of the frame at the head of the stream, once 4 bytes are in. */
function headLength(pending: Buffer | null, chunk: Buffer): number | undefined {
  const held = pending?.length ?? 0;
  if (held + chunk.length < 4) {
    return undefined;
  }
  if (pending && held >= 4) {
    return pending.readInt32BE(0);
  }
  return Buffer.concat([pending ?? Buffer.alloc(0), chunk.subarray(0, 4 - held)]).readInt32BE(0);
}

function track(packet: Packet): void {
  const callback = packet.callback;
  if (tracked.has(packet) || !callback) {
    return;
  }
  tracked.add(packet);
  packet.callback = (...args: [unknown, ...unknown[]]) => {
    answered.add(packet);
    callback(...args);
  };
}

function connectionLoss(): Exception {
  return new Exception(Exception.CONNECTION_LOSS, 'CONNECTION_LOSS', connectionLoss);
}

/** Answers a packet the library took off its queue without answering. */
function failUnanswered(packet: Packet | undefined, manager: Manager): boolean {
  if (!packet || manager.pendingQueue[0] === packet || answered.has(packet) || !packet.callback) {
    return false;
  }
  try {
    packet.callback(connectionLoss());
  } catch (err) {
    logger.error(`a ZooKeeper callback threw: ${String(err)}`);
  }
  return true;
}

/** Drops the connection; the library's close handler fails the pending calls and reconnects. */
function drop(manager: Manager, why: string): void {
  logger.warn(`dropping the connection to ZooKeeper to reconnect: ${why}`);
  manager.pendingBuffer = null;
  manager.socket?.destroy();
}

function guardedOnSocketData(original: Manager['onSocketData']): Manager['onSocketData'] {
  return function onSocketData(this: Manager, chunk: Buffer): void {
    const length = headLength(this.pendingBuffer, chunk);
    if (length !== undefined && (length < MIN_FRAME_BYTES || length > MAX_FRAME_BYTES)) {
      drop(this, `malformed frame: length ${length}`);
      return;
    }
    const zxid = this.zxid;
    const head = this.pendingQueue[0];
    if (head) {
      track(head);
    }
    try {
      // Handles one frame, then calls this.onSocketData again (this wrapper) for the next one.
      original.call(this, chunk);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // Answered, then threw: the caller's callback threw (a bug of ours, not of the frame).
      const why = head && answered.has(head) ? `a callback threw: ${message}` : `malformed frame: ${message}`;
      this.zxid = zxid;
      failUnanswered(head, this);
      drop(this, why);
      return;
    }
    // A reply taken off the queue but never answered: the library dropped it (xid out of order,
    // unknown request type) and destroyed the socket; its caller would have waited for ever.
    if (failUnanswered(head, this)) {
      drop(this, 'a reply that matches no request');
    }
  };
}

type ManagerClass = { prototype: Manager };

/** Installs the guard (once). Throws when the library is not the version it was written for. */
export function installZookeeperFrameGuard(): void {
  if (installed) {
    return;
  }
  // Internals of the library: no types, no public entry point.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { version } = require('node-zookeeper-client/package.json') as { version: string };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js') as ManagerClass;
  const proto = ConnectionManager.prototype;
  if (
    version !== GUARDED_VERSION ||
    typeof proto.onSocketData !== 'function' ||
    typeof proto.onSocketClosed !== 'function' ||
    typeof proto.onSocketConnected !== 'function'
  ) {
    throw new Error(
      `node-zookeeper-client ${version} is installed; src/infra/zookeeper/zookeeper-frame-guard.ts was written ` +
        `for ${GUARDED_VERSION}: check it against the new ConnectionManager before changing GUARDED_VERSION`,
    );
  }
  const { onSocketData, onSocketClosed, onSocketConnected } = proto;
  proto.onSocketData = guardedOnSocketData(onSocketData);
  proto.onSocketClosed = function (this: Manager, hadError: boolean): void {
    this.pendingBuffer = null;
    onSocketClosed.call(this, hadError);
  };
  proto.onSocketConnected = function (this: Manager): void {
    this.pendingBuffer = null;
    onSocketConnected.call(this);
  };
  installed = true;
}
