import { Env, readCron, readInt } from './env-readers';

export interface IdHistoryConfig {
  /** ID_HISTORY_RETENTION_DAYS: allocation history older than this is deleted (IDs that old decode to allocatedAt null). */
  retentionDays: number;
  /** ID_HISTORY_PRUNE_CRON: when the history is pruned (6-field cron), or null (`off`). */
  pruneCron: string | null;
  /** ID_HISTORY_DB_TIMEOUT_MS: each history read (decode, ID at time) and each prune batch; 503 when cut. */
  dbTimeoutMs: number;
}

export function readIdHistoryConfig(env: Env, isCron: (expr: string) => boolean): IdHistoryConfig {
  return {
    retentionDays: readInt(env, 'ID_HISTORY_RETENTION_DAYS', 90, 1, 36_500),
    pruneCron: readCron(env, 'ID_HISTORY_PRUNE_CRON', '20 17 * * * *', isCron),
    dbTimeoutMs: readInt(env, 'ID_HISTORY_DB_TIMEOUT_MS', 1000, 50, 600_000),
  };
}
