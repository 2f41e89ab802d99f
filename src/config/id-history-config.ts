import { Env, readCron, readInt } from './env-readers';

export interface IdHistoryConfig {
  /** ID_HISTORY_RETENTION_DAYS: allocation history older than this is deleted (IDs that old decode to allocatedAt null). */
  retentionDays: number;
  /** ID_HISTORY_PRUNE_CRON: when the history is pruned (6-field cron), or null (`off`). */
  pruneCron: string | null;
}

export function readIdHistoryConfig(env: Env, isCron: (expr: string) => boolean): IdHistoryConfig {
  return {
    retentionDays: readInt(env, 'ID_HISTORY_RETENTION_DAYS', 90, 1, 36_500),
    pruneCron: readCron(env, 'ID_HISTORY_PRUNE_CRON', '20 17 * * * *', isCron),
  };
}
