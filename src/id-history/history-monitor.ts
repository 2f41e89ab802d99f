/** In-process counts of the history pruning, for metrics. */
export class HistoryMonitor {
  private readonly rows = new Map<string, number>();
  /** When the last run finished (ms since the epoch), 0 before the first. */
  lastRunMs = 0;

  pruned(table: string, rows: number): void {
    this.rows.set(table, (this.rows.get(table) ?? 0) + rows);
  }

  pruneDone(): void {
    this.lastRunMs = Date.now();
  }

  prunedRows(): ReadonlyMap<string, number> {
    return this.rows;
  }
}
