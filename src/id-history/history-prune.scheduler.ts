import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCron } from '../common/cron-job';
import { ID_HISTORY_CONFIG } from '../config/config-tokens';
import { IdHistoryConfig } from '../config/id-history-config';
import { HistoryPruner } from './history-pruner';

const JOB = 'id-history-prune';

/**
 * Prunes the allocation history on ID_HISTORY_PRUNE_CRON (hourly by default; `off` = never). A tick
 * due while the last run still goes is skipped (cron's waitForCompletion); a tick of every instance
 * comes at the same second, and only the one that takes the Redis lock prunes (HistoryPruner.
 * pruneAlone); a failed run is logged and the next one starts where it stopped.
 */
@Injectable()
export class HistoryPruneScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(HistoryPruneScheduler.name);

  constructor(
    @Inject(ID_HISTORY_CONFIG) private readonly idHistory: IdHistoryConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly pruner: HistoryPruner,
  ) {}

  onApplicationBootstrap(): void {
    scheduleCron(
      this.schedulerRegistry,
      JOB,
      this.idHistory.pruneCron,
      () => this.pruner.pruneAlone(),
      (err) => this.logger.warn(`pruning the allocation history failed: ${(err as Error).message}`),
    );
  }
}
