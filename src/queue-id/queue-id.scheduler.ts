import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { QueueConfigService } from './queue-config.service';
import { QueueRefillService } from './queue-refill.service';

/**
 * The two background jobs of seed 001, on configurable cron expressions: the id_alloc reload
 * (with orphan-list cleanup) and the low-list refill sweep. Both also run once at start so a new
 * instance serves at once. A run still going when the next is due is not overlapped.
 */
@Injectable()
export class QueueIdScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(QueueIdScheduler.name);
  private readonly running = new Set<string>();
  private readonly jobNames: string[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly configService: QueueConfigService,
    private readonly refill: QueueRefillService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runOnce('queue-reload', () => this.reload());
    await this.runOnce('queue-refill', () => this.refillLow());
    this.schedule('queue-reload', this.config.queue.reloadCron, () => this.reload());
    this.schedule('queue-refill', this.config.queue.refillCron, () => this.refillLow());
  }

  onApplicationShutdown(): void {
    // ScheduleModule may already have stopped and deleted every cron job at shutdown.
    for (const name of this.jobNames) {
      if (this.schedulerRegistry.doesExist('cron', name)) {
        void this.schedulerRegistry.getCronJob(name).stop();
        this.schedulerRegistry.deleteCronJob(name);
      }
    }
    this.jobNames.length = 0;
  }

  private async reload(): Promise<void> {
    const { deletedLists } = await this.configService.reloadAndCleanUp();
    if (deletedLists > 0) {
      this.logger.log(`reload deleted ${deletedLists} orphan list(s)`);
    }
  }

  private async refillLow(): Promise<void> {
    const sweep = await this.refill.refillLowShards();
    if (sweep.refilled > 0 || sweep.failed > 0) {
      this.logger.log(
        `refill sweep: ${sweep.checked} checked, ${sweep.refilled} refilled, ${sweep.busy} busy, ` +
          `${sweep.exhausted} exhausted, ${sweep.failed} failed`,
      );
    }
  }

  private schedule(name: string, cron: string | null, task: () => Promise<void>): void {
    if (cron === null) {
      return;
    }
    const job = CronJob.from({ cronTime: cron, onTick: () => this.runOnce(name, task), start: true });
    this.schedulerRegistry.addCronJob(name, job);
    this.jobNames.push(name);
  }

  private async runOnce(name: string, task: () => Promise<void>): Promise<void> {
    if (this.running.has(name)) {
      return;
    }
    this.running.add(name);
    try {
      await task();
    } catch (err) {
      this.logger.warn(`${name} failed: ${(err as Error).message}`);
    } finally {
      this.running.delete(name);
    }
  }
}
