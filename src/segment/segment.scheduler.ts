import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCron } from '../common/cron-job';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { SegmentService } from './segment.service';

const JOB = 'segment-sync';

/**
 * Leaf's updateCacheFromDbAtEveryMinute: the tag sync at start and on SEGMENT_SYNC_CRON
 * (every 60 s by default; `off` = none). A failed first sync leaves the generator answering -1
 * until a later sync (scheduled, or triggered by a request) succeeds. Nothing runs when segment
 * mode is off. A tick due while the last sync is still going is skipped (cron's
 * waitForCompletion); @nestjs/schedule stops the registered job at shutdown.
 */
@Injectable()
export class SegmentScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(SegmentScheduler.name);

  constructor(
    @Inject(SEGMENT_CONFIG) private readonly segment: SegmentConfig,
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly service: SegmentService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.service.enabled) {
      return;
    }
    await this.syncTags().catch((err: unknown) => this.failed(err));
    scheduleCron(this.schedulerRegistry, JOB, this.segment.syncCron, () => this.syncTags(), (err) => this.failed(err));
  }

  private async syncTags(): Promise<void> {
    const { added, removed } = await this.service.sync();
    if (added.length > 0 || removed.length > 0) {
      this.logger.log(`leaf_alloc sync: added [${added.join(', ')}], removed [${removed.join(', ')}]`);
    }
  }

  private failed(err: unknown): void {
    this.logger.warn(`leaf_alloc sync failed: ${(err as Error).message}`);
  }
}
