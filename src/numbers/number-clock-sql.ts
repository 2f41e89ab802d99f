/** The view every instance reads the database clock from: `UTC_TIMESTAMP(3)` (migration 1763771200000). */
export const CLOCK_VIEW = 'shardleaf_db_clock';

const UTC_OFFSET = /^[+-][0-9]{2}:[0-9]{2}$/;

/**
 * The SQL expression of "now" in the time zone whose days the resets follow: the view's time
 * (alias `c`) moved from UTC to `offset` (NUMBER_TIME_ZONE, validated at start), as text the core
 * reads (`YYYY-MM-DD HH:MM:SS.ffffff`) whatever the driver's or the session's time zone. A numeric
 * offset needs no time zone tables. The tests compare against this same expression.
 */
export function numberClockSql(offset: string): string {
  if (!UTC_OFFSET.test(offset)) {
    throw new Error(`not a UTC offset: '${offset}'`);
  }
  const time = offset === '+00:00' ? 'c.db_now' : `CONVERT_TZ(c.db_now, '+00:00', '${offset}')`;
  return `DATE_FORMAT(${time}, '%Y-%m-%d %H:%i:%s.%f')`;
}
