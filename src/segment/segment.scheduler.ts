import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SegmentService } from './segment.service';

const JOB = 'segment-sync';

/**
 * Leaf's updateCacheFromDbAtEveryMinute: the tag sync at start and on SEGMENT_SYNC_CRON
 * (every 60 s by default). A failed first sync leaves the generator answering -1 until a later
 * sync (scheduled, or triggered by a request) succeeds. Nothing runs when segment mode is off.
 */
@Injectable()
export class SegmentScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SegmentScheduler.name);
  private scheduled = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly service: SegmentService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.service.enabled) {
      return;
    }
    await this.syncTags();
    const cron = this.config.segment.syncCron;
    if (cron !== null) {
      const job = CronJob.from({ cronTime: cron, onTick: () => this.syncTags(), start: true });
      this.schedulerRegistry.addCronJob(JOB, job);
      this.scheduled = true;
    }
  }

  onApplicationShutdown(): void {
    // ScheduleModule may already have stopped and deleted every cron job at shutdown.
    if (this.scheduled && this.schedulerRegistry.doesExist('cron', JOB)) {
      void this.schedulerRegistry.getCronJob(JOB).stop();
      this.schedulerRegistry.deleteCronJob(JOB);
      this.scheduled = false;
    }
  }

  /** Concurrent runs share one read (SegmentIdGenerator.sync), so ticks never pile up. */
  private async syncTags(): Promise<void> {
    try {
      const { added, removed } = await this.service.sync();
      if (added.length > 0 || removed.length > 0) {
        this.logger.log(`leaf_alloc sync: added [${added.join(', ')}], removed [${removed.join(', ')}]`);
      }
    } catch (err) {
      this.logger.warn(`leaf_alloc sync failed: ${(err as Error).message}`);
    }
  }
}
