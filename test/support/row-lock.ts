import { createConnection } from 'mysql2/promise';
import { testMysqlOptions } from './test-env';

/** An open transaction holding the lock of one id_alloc row. */
export interface RowLock {
  /** Transactions of other connections to this database waiting for a lock (the held row's, here). */
  waiters(): Promise<number>;
  /** Ends the transaction (the waiting update goes on) and closes the connection. */
  release(): Promise<void>;
}

/**
 * Holds the row lock of (appId, shardId) in `database`'s id_alloc: a refill's allocation of that
 * shard (the row update) waits until `release`, so a request refilling it on demand stays in
 * flight for as long as the test needs, without any hook in the service. `waiters` tells when it
 * got there (information_schema.PROCESSLIST, this database's connections of the same user).
 */
export async function holdIdAllocRow(database: string, appId: number, shardId: number): Promise<RowLock> {
  const conn = await createConnection(testMysqlOptions(database));
  await conn.beginTransaction();
  await conn.query('SELECT max_id FROM id_alloc WHERE app_id = ? AND shard_id = ? FOR UPDATE', [appId, shardId]);
  return {
    waiters: async () => {
      // PROCESSLIST, not INNODB_TRX: reading the lock tables needs the PROCESS privilege, which the
      // CI's test user does not have; every user sees its own connections (the service under test
      // connects as this user). A statement waiting for the held row shows as the allocation's
      // locking read of id_alloc (also from inside the procedure) or an UPDATE of it.
      const [rows] = await conn.query(
        `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
         WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND = 'Query'
           AND (INFO LIKE '%id_alloc%FOR UPDATE%' OR INFO LIKE 'UPDATE id_alloc%')`,
        [database],
      );
      return Number((rows as Array<{ n: number | string }>)[0].n);
    },
    release: async () => {
      await conn.commit();
      await conn.end();
    },
  };
}
