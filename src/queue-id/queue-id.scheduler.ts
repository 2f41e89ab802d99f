import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCron } from '../common/cron-job';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { AppRegistrySync } from './app-registry-sync.service';
import { LowListSweep } from './refill/low-list-sweep';

/**
 * The queue's two background jobs, on configurable cron expressions (`off` = none): the
 * id_alloc reload (with orphan-list cleanup) and the low-list refill sweep. Both also run once at
 * start so a new instance serves at once. A tick due while the job's last run is still going is
 * skipped (cron's waitForCompletion); @nestjs/schedule stops the registered jobs at shutdown.
 */
@Injectable()
export class QueueIdScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(QueueIdScheduler.name);

  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly registrySync: AppRegistrySync,
    private readonly sweep: LowListSweep,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.reload().catch(this.failed('queue-reload'));
    await this.refillLow().catch(this.failed('queue-refill'));
    scheduleCron(this.schedulerRegistry, 'queue-reload', this.queue.reloadCron, () => this.reload(), this.failed('queue-reload'));
    scheduleCron(this.schedulerRegistry, 'queue-refill', this.queue.refillCron, () => this.refillLow(), this.failed('queue-refill'));
  }

  private async reload(): Promise<void> {
    const { deletedLists } = await this.registrySync.reloadAndCleanUp();
    if (deletedLists > 0) {
      this.logger.log(`reload deleted ${deletedLists} orphan list(s)`);
    }
  }

  private async refillLow(): Promise<void> {
    const sweep = await this.sweep.run();
    if (sweep.refilled > 0 || sweep.failed > 0) {
      this.logger.log(
        `refill sweep: ${sweep.checked} checked, ${sweep.refilled} refilled, ${sweep.busy} busy, ` +
          `${sweep.exhausted} exhausted, ${sweep.failed} failed`,
      );
    }
  }

  private failed(name: string): (err: unknown) => void {
    return (err) => this.logger.warn(`${name} failed: ${(err as Error).message}`);
  }
}
