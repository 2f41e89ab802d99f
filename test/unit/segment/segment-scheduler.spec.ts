import { INestApplicationContext, Logger } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../../../src/config/load-config';
import { SEGMENT_CONFIG } from '../../../src/config/config-tokens';
import { SegmentScheduler } from '../../../src/segment/segment.scheduler';
import { SegmentService } from '../../../src/segment/segment.service';
import { HeldRuns } from '../../support/held-runs';

async function start(env: Record<string, string>, enabled = true) {
  const syncs = new HeldRuns();
  const service = { enabled, sync: () => syncs.run().then(() => ({ added: [], removed: [] })) };
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot()],
    providers: [
      SegmentScheduler,
      { provide: SEGMENT_CONFIG, useValue: loadConfig({ SNOWFLAKE_MODE: 'off', ...env }).segment },
      { provide: SegmentService, useValue: service },
    ],
  }).compile();
  const app = await moduleRef.init();
  return { app, registry: app.get(SchedulerRegistry), syncs };
}

/** Never due during a test: the ticks are fired by hand. */
const YEARLY = { SEGMENT_SYNC_CRON: '0 0 0 1 1 *' };

describe('SegmentScheduler', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
    jest.restoreAllMocks();
  });

  it('does nothing when segment mode is off, and syncs once without a job when the cron is off', async () => {
    const disabled = await start(YEARLY, false);
    expect(disabled.syncs.count).toBe(0);
    expect(disabled.registry.getCronJobs().size).toBe(0);
    await disabled.app.close();
    const s = await start({ SEGMENT_SYNC_CRON: 'off' });
    app = s.app;
    expect(s.syncs.count).toBe(1);
    expect(s.registry.getCronJobs().size).toBe(0);
  });

  it('skips a tick due while the last sync is still going, and logs a failed one', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const s = await start(YEARLY);
    app = s.app;
    const job = s.registry.getCronJob('segment-sync');
    s.syncs.hold = true;
    const first = job.fireOnTick();
    await job.fireOnTick();
    expect(s.syncs.count).toBe(2);
    s.syncs.release();
    await first;
    s.syncs.hold = false;
    s.syncs.fail = true;
    await job.fireOnTick();
    expect(s.syncs.count).toBe(3);
    expect(warn).toHaveBeenCalledWith('leaf_alloc sync failed: mysql is down');
  });
});
