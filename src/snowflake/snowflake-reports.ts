/**
 * Counts the periodic reports to the worker-id registry (in redis and zk_recycle mode: the lease
 * renewals) by outcome, for the metrics: `renewed` (same worker id), `switched` (a lost lease
 * replaced by a fresh worker id), `failed` (the registry did not answer, or the lease is lost and
 * no fresh one could be had yet).
 */
export type ReportOutcome = 'renewed' | 'switched' | 'failed';

export class SnowflakeReports {
  readonly counts: Record<ReportOutcome, number> = { renewed: 0, switched: 0, failed: 0 };

  count(outcome: ReportOutcome): void {
    this.counts[outcome]++;
  }
}
