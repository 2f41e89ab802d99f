/**
 * Error replies that mean "this node no longer takes writes": it was demoted to a replica
 * (READONLY), or it is a replica cut off from its primary (MASTERDOWN). The connection is then
 * dropped and made again, so a name or virtual IP moved to the promoted node is followed (a
 * Sentinel client asks the sentinels again). The failed command is not sent again: Redis refused
 * it without running it, and the caller has its error. Framework-free.
 */
const DEMOTED = /^(READONLY|MASTERDOWN)\b/;

export function isDemotionReply(message: string): boolean {
  return DEMOTED.test(message);
}
