import { Pool, PoolConnection, createPool } from 'mysql2';
import { DataSource } from 'typeorm';
import { DatabaseTimeoutError, boundPool } from '../../../src/infra/database/bounded-pool';
import { appSuite } from '../../support/app-suite';
import { BlackHoleProxy } from '../../support/black-hole-proxy';
import { pollUntil } from '../../support/poll';

/**
 * The MySQL bound (infra/database/bounded-pool.ts) on a real mysql2 pool of one connection, in front
 * of the shared MariaDB through a proxy that can black-hole the path: a cut query or pool close
 * leaves no socket open (mysql2's destroy() alone only half-closes it, and on a black-holed path the
 * server's FIN never comes), and a call cut while waiting for a connection hands that connection
 * back to the pool when it arrives, unused and alive.
 */
// Long enough for a new connection's handshake through the proxy on a loaded machine (the first
// getConnection of a test is bounded too); every cut below waits for it in full.
const BOUND_MS = 1500;

interface PoolInternals {
  _allConnections: { length: number };
  _freeConnections: { length: number };
}

/** A connection of the pool, as TypeORM takes one (through the bounded getConnection). */
function connection(pool: Pool): Promise<PoolConnection> {
  return new Promise((resolve, reject) => pool.getConnection((err, conn) => (err ? reject(err) : resolve(conn))));
}

/** One statement in TypeORM's callback form (the form the bound applies to). */
function query(conn: PoolConnection, sql: string): Promise<unknown> {
  return new Promise((resolve, reject) => conn.query(sql, [], (err, rows) => (err ? reject(err) : resolve(rows))));
}

function end(pool: Pool): Promise<void> {
  return new Promise((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
}

describe('the MySQL pool bound', () => {
  const suite = appSuite('boundedpool');
  let proxy: BlackHoleProxy;
  let pool: Pool;

  beforeEach(async () => {
    const server = new URL(suite.env.env.DATABASE_URL);
    proxy = await BlackHoleProxy.start(Number(server.port || 3306), { targetHost: server.hostname });
    pool = createPool({
      host: '127.0.0.1',
      port: proxy.port,
      user: decodeURIComponent(server.username),
      password: decodeURIComponent(server.password),
      database: suite.env.database,
      connectionLimit: 1,
    });
    boundPool({ driver: { pool } } as unknown as DataSource, BOUND_MS);
  });

  afterEach(async () => {
    await end(pool).catch(() => undefined);
    await proxy.close();
  });

  it('destroys the socket of a query cut on a black-holed path', async () => {
    const conn = await connection(pool);
    expect(await query(conn, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    proxy.blackHole();
    await expect(query(conn, 'SELECT 2')).rejects.toBeInstanceOf(DatabaseTimeoutError);
    conn.release(); // as TypeORM does after a failed query: a no-op on a destroyed connection
    expect((pool as unknown as PoolInternals)._allConnections.length).toBe(0);
    await pollUntil(() => `the cut connection's socket to be closed (${proxy.clientSocketsHeld()} held)`, () => proxy.clientSocketsHeld() === 0, {
      timeoutMs: 10_000,
    });
  });

  it('closes the pool within the bound on a black-holed path, its sockets destroyed', async () => {
    const conn = await connection(pool);
    await query(conn, 'SELECT 1');
    conn.release();
    proxy.blackHole();
    // mysql2's end() sends QUIT and waits for the server to close: it never does here.
    await end(pool);
    await pollUntil(() => `the pool's socket to be closed (${proxy.clientSocketsHeld()} held)`, () => proxy.clientSocketsHeld() === 0, {
      timeoutMs: 10_000,
    });
  });

  it('hands a connection that arrives after its waiter was cut back to the pool, unused and alive', async () => {
    const held = await connection(pool);
    const [{ id: threadId }] = (await query(held, 'SELECT CONNECTION_ID() AS id')) as Array<{ id: number }>;
    // The pool's only connection is in use: this wait is cut by the bound.
    await expect(connection(pool)).rejects.toBeInstanceOf(DatabaseTimeoutError);
    // Released now, the connection goes to the cut waiter first, which must give it back.
    held.release();
    const internals = pool as unknown as PoolInternals;
    await pollUntil('the connection back among the free ones', () => internals._freeConnections.length === 1);
    expect(internals._allConnections.length).toBe(1);
    const again = await connection(pool);
    expect(await query(again, 'SELECT CONNECTION_ID() AS id')).toEqual([{ id: threadId }]);
    again.release();
  });
});
