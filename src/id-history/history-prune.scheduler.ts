import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCron } from '../common/cron-job';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly pruner: HistoryPruner,
  ) {}

  onApplicationBootstrap(): void {
    scheduleCron(
      this.schedulerRegistry,
      JOB,
      this.config.idHistory.pruneCron,
      () => this.pruner.pruneAlone(),
      (err) => this.logger.warn(`pruning the allocation history failed: ${(err as Error).message}`),
    );
  }
}
