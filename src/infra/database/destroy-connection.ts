/** The parts of a mysql2 connection (single or pooled, callback API) that closing it at once needs. */
export interface MysqlConnectionLike {
  destroy(): void;
  readonly stream?: { destroy?(): void };
}

/**
 * Closes a mysql2 connection at once, its socket included. mysql2's destroy() only half-closes the
 * socket (stream.end(): it sends a FIN and waits for the server's): on a frozen server or a
 * black-holed path that socket lingers until the kernel gives up (about 15 minutes of
 * retransmissions), holding a file descriptor and keeping the process alive. destroy() comes first:
 * it takes the connection out of its pool and marks it closing, so the socket's close is not
 * reported as a lost connection.
 */
export function destroyConnection(conn: MysqlConnectionLike): void {
  conn.destroy();
  conn.stream?.destroy?.();
}
