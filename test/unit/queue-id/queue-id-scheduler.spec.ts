import { INestApplicationContext, Logger } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../../../src/config/load-config';
import { QUEUE_CONFIG } from '../../../src/config/config-tokens';
import { AppRegistrySync } from '../../../src/queue-id/app-registry-sync.service';
import { QueueIdScheduler } from '../../../src/queue-id/queue-id.scheduler';
import { LowListSweep } from '../../../src/queue-id/refill/low-list-sweep';
import { HeldRuns } from '../../support/held-runs';

/** The scheduler inside @nestjs/schedule's own module, as AppModule wires it. */
async function start(crons: Record<string, string>) {
  const reload = new HeldRuns();
  const refill = new HeldRuns();
  const config = loadConfig({ SNOWFLAKE_MODE: 'off', ...crons });
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot()],
    providers: [
      QueueIdScheduler,
      { provide: QUEUE_CONFIG, useValue: config.queue },
      {
        provide: AppRegistrySync,
        useValue: { reloadAndCleanUp: () => reload.run().then(() => ({ deletedLists: 0 })) },
      },
      {
        provide: LowListSweep,
        useValue: {
          run: () => refill.run().then(() => ({ checked: 0, refilled: 0, busy: 0, exhausted: 0, failed: 0 })),
        },
      },
    ],
  }).compile();
  const app = await moduleRef.init();
  return { app, registry: app.get(SchedulerRegistry), reload, refill };
}

// Cron expressions that never come due during a test: the ticks are fired by hand.
const YEARLY = { QUEUE_RELOAD_CRON: '0 0 0 1 1 *', QUEUE_REFILL_CRON: '30 0 0 1 1 *' };

describe('QueueIdScheduler', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
    jest.restoreAllMocks();
  });

  it('runs the reload and the refill sweep once at start, and schedules nothing when both are off', async () => {
    const s = await start({ QUEUE_RELOAD_CRON: 'off', QUEUE_REFILL_CRON: 'off' });
    app = s.app;
    expect([s.reload.count, s.refill.count]).toEqual([1, 1]);
    expect([...s.registry.getCronJobs().keys()]).toEqual([]);
  });

  it('skips a tick due while the last run is still going', async () => {
    const s = await start(YEARLY);
    app = s.app;
    expect([...s.registry.getCronJobs().keys()].sort()).toEqual(['queue-refill', 'queue-reload']);
    const job = s.registry.getCronJob('queue-reload');
    s.reload.hold = true;
    const first = job.fireOnTick();
    await job.fireOnTick();
    expect(s.reload.count).toBe(2);
    s.reload.release();
    await first;
    s.reload.hold = false;
    await job.fireOnTick();
    expect(s.reload.count).toBe(3);
  });

  it('logs a failed run with the job name and keeps the job', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const s = await start(YEARLY);
    app = s.app;
    s.reload.fail = true;
    await s.registry.getCronJob('queue-reload').fireOnTick();
    expect(warn).toHaveBeenCalledWith('queue-reload failed: mysql is down');
    expect(s.registry.getCronJob('queue-reload').isActive).toBe(true);
  });

  it('leaves stopping the jobs to @nestjs/schedule at shutdown', async () => {
    const s = await start(YEARLY);
    const jobs = [...s.registry.getCronJobs().values()];
    expect(jobs.map((j) => j.isActive)).toEqual([true, true]);
    await s.app.close();
    expect(jobs.map((j) => j.isActive)).toEqual([false, false]);
    expect(s.registry.getCronJobs().size).toBe(0);
  });
});
