import { DataSource, QueryRunner } from 'typeorm';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';

/** Runs one SQL statement on the connection of the call. */
export type Sql = <T = unknown>(sql: string, params?: unknown[]) => Promise<T>;

/** The part of a mysql2 pool connection this uses. */
interface PooledConnection {
  destroy(): void;
  release(): void;
}

/**
 * Database calls with a time bound: a statement or transaction that has not finished within
 * `timeoutMs` (connection from the pool included) fails at once with 503 BACKEND_UNAVAILABLE, and
 * its connection is destroyed: the server rolls the transaction back when it notices, the pool
 * opens a new connection, and nothing is resent. A transaction whose COMMIT was cut may or may not
 * have committed: callers treat what it allocated as a gap. mysql2's own query timeout only
 * reports the timeout and leaves the command on the connection, so it is not used.
 */
export class BoundedDb {
  constructor(
    private readonly dataSource: DataSource,
    readonly timeoutMs: number,
  ) {}

  /** One statement, autocommitted. */
  query<T = unknown>(what: string, sql: string, params?: unknown[]): Promise<T> {
    return this.run(what, false, (q) => q<T>(sql, params));
  }

  /** `work` in one transaction (the server's default isolation), committed when it returns. */
  transaction<T>(what: string, work: (q: Sql) => Promise<T>): Promise<T> {
    return this.run(what, true, work);
  }

  private async run<T>(what: string, inTransaction: boolean, work: (q: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner('master');
    let abandoned = false;
    const abandon = (): void => {
      abandoned = true;
      destroyConnectionOf(runner);
    };
    const task = (async (): Promise<T> => {
      await runner.connect();
      if (abandoned) {
        throw new Error('abandoned');
      }
      if (inTransaction) {
        await runner.startTransaction();
      }
      const q: Sql = <R>(sql: string, params?: unknown[]): Promise<R> => {
        if (abandoned) {
          return Promise.reject(new Error('abandoned'));
        }
        return runner.query(sql, params) as Promise<R>;
      };
      try {
        const result = await work(q);
        if (inTransaction) {
          await runner.commitTransaction();
        }
        return result;
      } catch (err) {
        if (inTransaction && !abandoned && runner.isTransactionActive) {
          await runner.rollbackTransaction().catch(() => undefined);
        }
        throw err;
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandon();
        reject(new IdGenError(ErrorKind.BackendUnavailable, `${what}: the database did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([task, deadline]);
    } finally {
      clearTimeout(timer);
      if (abandoned) {
        // Its late settling is nobody's business any more.
        task.catch(() => undefined);
      } else {
        await runner.release();
      }
    }
  }
}

/**
 * Destroys the connection of `runner` (now, or as soon as the pool hands it over), so a statement
 * still running on it can never finish on a connection someone else reuses.
 */
function destroyConnectionOf(runner: QueryRunner): void {
  const current = (runner as unknown as { databaseConnection?: PooledConnection }).databaseConnection;
  if (current) {
    current.destroy();
    return;
  }
  runner.connect().then(
    (connection: PooledConnection) => connection.destroy(),
    () => undefined,
  );
}
