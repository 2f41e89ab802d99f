import { Module } from '@nestjs/common';
import { HistoryMonitor } from './history-monitor';
import { HistoryPruneScheduler } from './history-prune.scheduler';
import { HistoryPruner } from './history-pruner';

/**
 * The retention of the allocation history (`id_alloc_history`, `leaf_alloc_history`): the queue
 * and segment modules write and read their own table; this one deletes what is older than
 * ID_HISTORY_RETENTION_DAYS.
 */
@Module({
  providers: [{ provide: HistoryMonitor, useFactory: () => new HistoryMonitor() }, HistoryPruner, HistoryPruneScheduler],
  exports: [HistoryMonitor, HistoryPruner],
})
export class IdHistoryModule {}
