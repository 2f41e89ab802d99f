import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';

/**
 * Runs `task` on `cron` (6 fields, seconds first; null = never) as job `name` of the registry: a tick
 * due while the last run is still going is skipped (cron's waitForCompletion), a failed run goes
 * to `failed` (cron's errorHandler: decision 0012), and @nestjs/schedule stops the job at shutdown.
 */
export function scheduleCron(
  registry: SchedulerRegistry,
  name: string,
  cron: string | null,
  task: () => Promise<unknown>,
  failed: (err: unknown) => void,
): void {
  if (cron === null) {
    return;
  }
  const job = CronJob.from({
    cronTime: cron,
    onTick: async () => {
      await task();
    },
    start: true,
    waitForCompletion: true,
    errorHandler: failed,
  });
  registry.addCronJob(name, job);
}
