import { Logger } from '@nestjs/common';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterDeadline } from '../../common/after-deadline';
import { RedisConfig, RedisUrlParts } from '../../config/redis-config';
import { isDemotionReply } from '../../infra/redis/demotion-replies';
import { REDIS_KEEPALIVE_MS, standaloneEndpoint } from '../../infra/redis/redis-client.factory';
import { RedisClient } from '../../infra/redis/redis.tokens';
import { RespPopReader } from './resp/resp-pop-reader';
import { PoppedIndexList, RespErrorReply, RespProtocolError } from './resp/resp-bytes';
import { writeHandshake } from './pop-connection-handshake';
import { encodeCommand, lpopRequest } from './resp/resp-encode';
/** Injection token of the pop connection: a PopConnection, or null (createPopConnection). */
export const POP_CONNECTION = Symbol('POP_CONNECTION');

/**
 * The pop connection of batches and single gets: standalone Redis only, and not when pops must be
 * confirmed by replicas (their WAIT must run on the connection that popped). Sentinel, Cluster and
 * REDIS_WAIT_REPLICAS pop through ioredis (null).
 */
export function createPopConnection(redis: RedisClient, config: RedisConfig, confirmsPops: boolean): PopConnection | null {
  return config.topology.kind === 'standalone' && !confirmsPops ? new PopConnection(standaloneEndpoint(redis), config.commandTimeoutMs) : null;
}

/** `PING` as RESP bytes (readiness, `ping`). */
const PING_REQUEST = encodeCommand(['PING']);

/** Backoff after a connection that never became ready: 100 ms, doubling, at most 2 s. */
const BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2000;

/** The accepted indexes of one batch pop and the length read after it (-1: not read, or its read failed). */
export interface RawPopped extends PoppedIndexList {
  length: number;
}

/** One connection and the reader of its replies; a lost connection is never reused. */
interface Link {
  socket: net.Socket;
  reader: RespPopReader;
  ready: boolean;
  /** Requests of this turn of the event loop not written yet (one write for all of them, setImmediate). */
  unsent: string;
}

/**
 * The service's own Redis connection for pops (standalone REDIS_URL only; decisions 0017, 0041):
 * a batch's `LPOP key n` (and `LLEN key` in the same write) and the single get's `LPOP key 1`
 * sent as RESP bytes, the reply read by core/resp-pop-reader.ts straight into accepted indexes (no
 * Buffer per entry: ioredis's decoding was the largest cost of a batch, and its per-command
 * objects of a single get, docs/performance.md). Nothing else goes over it but the
 * readiness probe's `PING`.
 *
 * Safety, as the ioredis client's guards (unanswered-commands.ts): a command is written once and
 * never again. A lost connection or any reply that does not frame as expected destroys the
 * connection and fails every command waiting on it (their entries, popped or not, are a gap); the
 * next pop connects again, after a backoff when the last attempt never became ready. AUTH and
 * SELECT from REDIS_URL go first on every connection; an error reply to them drops it.
 *
 * Bounded as the ioredis client (command-deadlines.ts): a pop not answered within `timeoutMs`
 * (connecting included) fails, and so does its connection with every pop waiting on it (a frozen
 * or black-holed Redis); a connection whose handshake takes longer is abandoned. `ping` goes the
 * same way (readiness watches this connection too). A reply saying
 * the node was demoted (READONLY, MASTERDOWN) drops the connection too, so the next pop connects
 * again and follows a name or virtual IP moved to the promoted node.
 */
export class PopConnection {
  private readonly logger = new Logger('PopConnection');
  private link: Link | null = null;
  private failures = 0;
  private retryAt = 0;
  private closed = false;
  private lastError = '';

  constructor(
    private readonly endpoint: RedisUrlParts,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `LPOP key n` (with `LLEN key` after it when withLength), entries above maxIndex dropped and
   * flagged, malformed ones counted (acceptEntries' rules). Rejects when the connection is
   * unavailable or lost before the pop's reply, or when the LLEN's reply does not frame; an error
   * reply to the LLEN, or a connection lost after the pop's reply, leaves the length -1.
   */
  pop(key: string, n: number, maxIndex: bigint, withLength: boolean): Promise<RawPopped> {
    return this.popWith(lpopRequest(key, n, withLength), n, maxIndex, withLength);
  }

  /**
   * `pop` with its request given as lpopRequest(key, n, withLength) made it (built once by a caller
   * that pops the same list again and again: the single get, redis-queue-lists.ts).
   */
  popWith(request: string, n: number, maxIndex: bigint, withLength: boolean): Promise<RawPopped> {
    const link = this.linkOrError();
    if (link instanceof Error) {
      return Promise.reject(link);
    }
    return new Promise<RawPopped>((outerResolve, outerReject) => {
      // Settled once: by the reply, or by the deadline (then the connection goes, with every pop on it).
      let settled = false;
      const cancel = afterDeadline(this.timeoutMs, () => {
        if (!settled) {
          this.deadlinePassed(link);
        }
      });
      const resolve = (value: RawPopped): void => {
        settled = true;
        cancel();
        outerResolve(value);
      };
      const reject = (err: Error): void => {
        settled = true;
        cancel();
        this.dropIfDemoted(link, err);
        outerReject(err);
      };
      if (!withLength) {
        link.reader.expectPop(n, maxIndex, (err, list) => {
          if (err) {
            reject(err);
            return;
          }
          resolve({ ...(list as PoppedIndexList), length: -1 });
        });
      } else {
        let popError: Error | null = null;
        let popped: PoppedIndexList | undefined;
        link.reader.expectPop(n, maxIndex, (err, list) => {
          popError = err;
          popped = list;
        });
        link.reader.expectInteger((err, length) => {
          // A reply that did not frame after the pop's: the stream is not trusted, the pop's entries too (a gap).
          if (popError || !popped || err instanceof RespProtocolError) {
            reject(popError ?? err ?? new Error('pop connection: no pop reply'));
            return;
          }
          resolve({ ...popped, length: err ? -1 : (length as number) });
        });
      }
      this.send(link, request);
    });
  }

  /**
   * `PING` on this connection, in turn with the pops (readiness, health/backend-probes.ts): it
   * connects when there is no connection, and resolves on `PONG`. It fails as a pop fails: the
   * connection unavailable (backing off after failed attempts: the last error), lost, or silent
   * past the deadline, which drops the connection with every pop waiting on it.
   */
  ping(): Promise<void> {
    const link = this.linkOrError();
    if (link instanceof Error) {
      return Promise.reject(link);
    }
    return new Promise<void>((resolve, reject) => {
      const cancel = afterDeadline(this.timeoutMs, () => this.deadlinePassed(link));
      link.reader.expectStatus('PONG', (err) => {
        cancel();
        if (err) {
          this.dropIfDemoted(link, err);
          reject(err);
          return;
        }
        resolve();
      });
      this.send(link, PING_REQUEST);
    });
  }

  /**
   * A pop's deadline passed without its reply (common/after-deadline.ts: a reply that arrived
   * during an event-loop stall was read first): the connection is dropped and every pop waiting on
   * it fails (their entries, popped or not, are a gap).
   */
  private deadlinePassed(link: Link): void {
    if (this.link === link) {
      this.drop(link, new Error(`pop connection: Redis did not answer within ${this.timeoutMs} ms`));
      link.socket.destroy();
    }
  }

  /**
   * A demoted node refuses writes: its connection goes at once (the pops waiting on it fail: a
   * replica ran none of them), so the next pop connects again. Called while the reply is read: the
   * rest of that chunk then has no command waiting and is dropped with the socket.
   */
  private dropIfDemoted(link: Link, err: Error): void {
    if (err instanceof RespErrorReply && isDemotionReply(err.message)) {
      this.drop(link, new Error(`pop connection: ${err.message}`));
      link.socket.destroy();
    }
  }

  /**
   * Requests made in one turn of the event loop (the HTTP requests read together) go out in one
   * write: one syscall instead of one per request. Written in the order their replies are
   * expected; a link dropped before the write never sends them (they already failed).
   */
  private send(link: Link, request: string): void {
    // Before the handshake answered, pops wait (written by `ready`): a pop written behind a SELECT
    // that then fails would run on the wrong database.
    if (link.unsent.length === 0 && link.ready) {
      setImmediate(() => {
        const bytes = link.unsent;
        link.unsent = '';
        if (this.link === link && bytes.length > 0) {
          link.socket.write(bytes);
        }
      });
    }
    link.unsent += request;
  }

  /** Closes the connection for good (app shutdown); waiting pops fail. */
  async close(): Promise<void> {
    this.closed = true;
    const link = this.link;
    if (!link) {
      return;
    }
    await new Promise<void>((resolve) => {
      link.socket.once('close', () => resolve());
      link.socket.destroy();
    });
  }

  /** The connection, or why there is none (closed, or backing off: the last error) to reject with. */
  private linkOrError(): Link | Error {
    try {
      return this.connection();
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  private connection(): Link {
    if (this.closed) {
      throw new Error('pop connection: closed');
    }
    if (this.link) {
      return this.link;
    }
    if (Date.now() < this.retryAt) {
      throw new Error(`pop connection to Redis unavailable (${this.lastError || 'reconnecting'})`);
    }
    return this.connect();
  }

  private connect(): Link {
    const { host, port } = this.endpoint;
    // TLS: the host is the server name checked against the certificate (as ioredis's `tls: {}`).
    const socket = this.endpoint.tls ? tls.connect({ host, port }) : net.connect({ host, port });
    const link: Link = { socket, reader: new RespPopReader(), ready: false, unsent: '' };
    this.link = link;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, REDIS_KEEPALIVE_MS);
    socket.setTimeout(this.timeoutMs, () => {
      if (!link.ready) {
        socket.destroy(new Error(`connect and handshake not done within ${this.timeoutMs} ms`));
      }
    });
    let failure: Error | null = null;
    socket.on('error', (err: Error) => {
      failure ??= err;
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        link.reader.feed(chunk);
      } catch (err) {
        // Nothing after a reply that does not frame can be attributed to a command: drop it all.
        failure = err instanceof RespProtocolError ? err : new RespProtocolError((err as Error).message);
        this.drop(link, failure);
        socket.destroy();
      }
    });
    socket.on('close', () => {
      this.drop(link, failure ?? new Error('pop connection: connection closed'));
    });
    const fail = (err: Error): void => {
      this.drop(link, err);
      socket.destroy();
    };
    writeHandshake(this.endpoint, socket, link.reader, this.logger, fail, () => {
      link.ready = true;
      socket.setTimeout(0);
      this.failures = 0;
      this.lastError = '';
      // The pops asked for while connecting, in the order asked.
      const waiting = link.unsent;
      link.unsent = '';
      if (this.link === link && waiting.length > 0) {
        socket.write(waiting);
      }
    });
    return link;
  }

  /** The connection is gone: every waiting command fails; the next pop reconnects (after a backoff if it never became ready). */
  private drop(link: Link, err: Error): void {
    if (this.link !== link) {
      return;
    }
    this.link = null;
    link.unsent = '';
    if (link.ready) {
      this.failures = 0;
      this.retryAt = 0;
    } else {
      this.failures++;
      this.retryAt = Date.now() + Math.min(BACKOFF_MS * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
    }
    if (err.message !== this.lastError && !this.closed) {
      this.lastError = err.message;
      this.logger.warn(`pop connection lost: ${err.message}`);
    }
    link.reader.failAll(err);
  }
}
