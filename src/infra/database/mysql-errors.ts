/** MySQL/MariaDB: Table … doesn't exist. */
export const ER_NO_SUCH_TABLE = 1146;

/** The MySQL error number of a driver error or of TypeORM's wrapper around one. */
export function errnoOf(err: unknown): unknown {
  const e = err as { errno?: unknown; driverError?: { errno?: unknown } } | null;
  return e?.errno ?? e?.driverError?.errno;
}

/** MySQL/MariaDB: PROCEDURE … does not exist. */
export const ER_SP_DOES_NOT_EXIST = 1305;
