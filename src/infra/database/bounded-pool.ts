import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { afterDeadline } from '../../common/after-deadline';
import { destroyConnection } from './destroy-connection';

/** A MySQL call that was not answered in time: a write may or may not have run (treat it as a gap). */
export class DatabaseTimeoutError extends Error {
  /** Read by common/backend-failure.ts (a 503, not a 500). */
  readonly code = 'PROTOCOL_SEQUENCE_TIMEOUT';

  constructor(message: string) {
    super(message);
    this.name = 'DatabaseTimeoutError';
  }
}

type Callback = (err: Error | null, ...rest: unknown[]) => void;

/** The parts of mysql2's pool and pool connection used here (TypeORM's MysqlDriver holds the pool). */
interface PoolConnection {
  query(...args: unknown[]): unknown;
  release(): void;
  destroy(): void;
  readonly stream?: { readonly destroyed?: boolean; destroy?(): void; once?(event: 'close', listener: () => void): unknown };
}

interface Pool {
  getConnection(cb: (err: Error | null, conn?: PoolConnection) => void): void;
  end(cb?: (err?: Error | null) => void): void;
  readonly _allConnections?: { length: number; get(i: number): PoolConnection };
}

/**
 * Bounds every call the service makes to MySQL once it has started (the migrations at start are
 * not bounded: a long one must not be cut), against a frozen or black-holed database:
 * - waiting for a pool connection: at most `timeoutMs`; a connection handed over later goes back
 *   to the pool unused (released, not destroyed: nothing was sent on it for the cut call);
 * - each query (TypeORM's callback form, so every statement of a transaction too): at most
 *   `timeoutMs` from the call. Then the query fails with DatabaseTimeoutError and its connection is
 *   destroyed, its socket included (destroy-connection.ts) — never returned to the pool in use:
 *   mysql2's own `timeout` only calls back and leaves the connection with the unanswered query at
 *   its head, so every later query on it waits behind it for ever. The query may still run (a
 *   frozen server reads it when it resumes): a timed-out allocation is a gap, never retried as the
 *   same range;
 * - closing the pool (shutdown): at most `timeoutMs` for mysql2's close (QUIT on each connection)
 *   and for the server to close the sockets, then the connections left are destroyed likewise.
 * Every deadline fires only after the event loop read what already arrived
 * (common/after-deadline.ts), so a reply that came during an event-loop stall is not taken for
 * silence.
 */
export function boundPool(dataSource: DataSource, timeoutMs: number): void {
  const pool = (dataSource.driver as unknown as { pool?: Pool }).pool;
  if (!pool) {
    throw new Error('boundPool: the TypeORM driver has no mysql2 pool');
  }
  const logger = new Logger('Database');
  const bounded = new WeakSet<PoolConnection>();

  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (cb) => {
    let done = false;
    const cancel = afterDeadline(timeoutMs, () => {
      if (!done) {
        done = true;
        cb(new DatabaseTimeoutError(`no MySQL connection within ${timeoutMs} ms`));
      }
    });
    getConnection((err, conn) => {
      if (done) {
        conn?.release();
        return;
      }
      done = true;
      cancel();
      if (conn && !bounded.has(conn)) {
        bounded.add(conn);
        boundQueries(conn, timeoutMs, logger);
      }
      cb(err, conn);
    });
  };

  const end = pool.end.bind(pool);
  pool.end = (cb) => {
    // mysql2 sends each connection QUIT, calls back, and leaves the socket for the server to close:
    // one that never does (frozen, black-holed) would keep its socket, and the process, for ever.
    const all = pool._allConnections;
    const connections = Array.from({ length: all?.length ?? 0 }, (_, i) => (all as NonNullable<typeof all>).get(i));
    let open = connections.filter((c) => c.stream !== undefined && c.stream.destroyed !== true);
    let called = false;
    const callBack = (err?: Error | null): void => {
      if (!called) {
        called = true;
        cb?.(err);
      }
    };
    const cancel = afterDeadline(timeoutMs, () => {
      open = open.filter((c) => c.stream?.destroyed !== true);
      if (open.length > 0) {
        logger.warn(`MySQL did not close ${open.length} connection(s) within ${timeoutMs} ms of the pool's close: destroyed`);
        open.forEach(destroyConnection);
      }
      callBack();
    });
    for (const conn of open) {
      conn.stream?.once?.('close', () => {
        open = open.filter((c) => c !== conn);
        if (open.length === 0 && called) {
          cancel();
        }
      });
    }
    end((err) => {
      callBack(err);
      if (open.length === 0) {
        cancel();
      }
    });
  };
}

function boundQueries(conn: PoolConnection, timeoutMs: number, logger: Logger): void {
  const query = conn.query.bind(conn);
  conn.query = (...args: unknown[]): unknown => {
    const last = args.length - 1;
    if (typeof args[last] !== 'function') {
      // A streamed query (no callback): not used by the service.
      return query(...args);
    }
    const cb = args[last] as Callback;
    let done = false;
    const cancel = afterDeadline(timeoutMs, () => {
      if (done) {
        return;
      }
      done = true;
      logger.warn(`MySQL did not answer a query within ${timeoutMs} ms: its connection is destroyed`);
      destroyConnection(conn);
      cb(new DatabaseTimeoutError(`MySQL did not answer within ${timeoutMs} ms: the statement may or may not have run`));
    });
    args[last] = (err: Error | null, ...rest: unknown[]): void => {
      if (done) {
        return;
      }
      done = true;
      cancel();
      cb(err, ...rest);
    };
    return query(...args);
  };
}
