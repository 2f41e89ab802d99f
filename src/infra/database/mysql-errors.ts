/** MySQL/MariaDB: Table … doesn't exist. */
export const ER_NO_SUCH_TABLE = 1146;
/** MySQL/MariaDB: PROCEDURE … does not exist. */
export const ER_SP_DOES_NOT_EXIST = 1305;
/** MySQL/MariaDB: Deadlock found when trying to get lock; the whole transaction was rolled back. */
export const ER_LOCK_DEADLOCK = 1213;

/** The MySQL error number of a driver error or of TypeORM's wrapper around one. */
export function errnoOf(err: unknown): unknown {
  const e = err as { errno?: unknown; driverError?: { errno?: unknown } } | null;
  return e?.errno ?? e?.driverError?.errno;
}

/** The rows `read` gives, or none when its table does not exist (a table the migrations add, not run yet). */
export async function rowsOrNoneWithoutTable<T>(read: Promise<T[]>): Promise<T[]> {
  try {
    return await read;
  } catch (err) {
    if (errnoOf(err) === ER_NO_SUCH_TABLE) {
      return [];
    }
    throw err;
  }
}

/** A time as a DATETIME(3) literal in UTC, as `UTC_TIMESTAMP(3)` writes it. */
export function sqlUtc(time: Date): string {
  return time.toISOString().replace('T', ' ').slice(0, 23);
}
