import { Counter, Gauge, Registry } from 'prom-client';
import { HISTORY_TABLES } from '../id-history/history-pruner';
import { HistoryMonitor } from '../id-history/history-monitor';

/** The allocation history's retention: rows pruned per table and when this instance last pruned. */
export function registerHistoryMetrics(register: Registry, monitor: HistoryMonitor): void {
  new Counter({
    name: 'shardleaf_id_history_pruned_rows_total',
    help: 'Allocation history rows older than ID_HISTORY_RETENTION_DAYS deleted by this instance, by table',
    labelNames: ['table'],
    registers: [register],
    collect() {
      this.reset();
      for (const table of HISTORY_TABLES) {
        this.inc({ table }, monitor.prunedRows().get(table) ?? 0);
      }
    },
  });
  new Gauge({
    name: 'shardleaf_id_history_last_prune_timestamp_seconds',
    help: 'When this instance last finished pruning the allocation history (0: not yet)',
    registers: [register],
    collect() {
      this.set(monitor.lastRunMs / 1000);
    },
  });
}
