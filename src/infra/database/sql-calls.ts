import { DataSource } from 'typeorm';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { DatabaseTimeoutError } from './bounded-pool';

/** Runs one SQL statement on the connection of the call. */
export type Sql = <T = unknown>(sql: string, params?: unknown[]) => Promise<T>;

/**
 * Raw SQL statements and transactions, each named for the error it fails with. Their time bound is
 * the pool's, as for every MySQL call of the service (bounded-pool.ts, DB_QUERY_TIMEOUT_MS): the
 * wait for a connection and each statement (BEGIN and COMMIT included) fail past it, and the
 * connection of a statement cut by it is destroyed, never handed back to the pool with the
 * statement still on it; the server rolls its transaction back when it notices, and nothing is
 * resent. Such a cut answers 503 BACKEND_UNAVAILABLE naming what was being done. A transaction
 * whose COMMIT was cut may or may not have committed: callers treat what it allocated as a gap.
 */
export class SqlCalls {
  constructor(private readonly dataSource: DataSource) {}

  /** One statement, autocommitted. */
  async query<T = unknown>(what: string, sql: string, params?: unknown[]): Promise<T> {
    try {
      return await this.dataSource.query<T>(sql, params);
    } catch (err) {
      throw named(what, err);
    }
  }

  /**
   * `work` in one transaction (the server's default isolation) on one connection: committed when it
   * returns, rolled back when it throws, except on a connection the bound destroyed (the server
   * rolls that one back itself).
   */
  async transaction<T>(what: string, work: (q: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner('master');
    try {
      await runner.connect();
      await runner.startTransaction();
      const result = await work(<R>(sql: string, params?: unknown[]) => runner.query(sql, params) as Promise<R>);
      await runner.commitTransaction();
      return result;
    } catch (err) {
      if (timeoutIn(err) === null && runner.isTransactionActive) {
        await runner.rollbackTransaction().catch(() => undefined);
      }
      throw named(what, err);
    } finally {
      await runner.release();
    }
  }
}

/** The DatabaseTimeoutError of a call cut by the pool's bound (itself, or under TypeORM's QueryFailedError), else null. */
function timeoutIn(err: unknown): DatabaseTimeoutError | null {
  const cause = (err as { driverError?: unknown } | null)?.driverError ?? err;
  return cause instanceof DatabaseTimeoutError ? cause : null;
}

/** A call cut by the pool's bound becomes BACKEND_UNAVAILABLE naming `what`; any other failure goes on as it is. */
function named(what: string, err: unknown): unknown {
  const timeout = timeoutIn(err);
  return timeout === null ? err : new IdGenError(ErrorKind.BackendUnavailable, `${what}: ${timeout.message}`);
}
