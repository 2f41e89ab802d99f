import { Listeners } from '../common/listeners';

/** The generators that hand out leases (snowflake has none: see docs/client.md). */
export type LeaseGenerator = 'queue' | 'segment';
/** How a lease request ended: granted, refused (4xx/410) or failed (503/500). */
export type LeaseOutcome = 'granted' | 'refused' | 'failed';

export type LeaseListener = (generator: LeaseGenerator, outcome: LeaseOutcome, ids: bigint) => void;

/** In-process notifications of lease requests, for metrics (like RefillMonitor). */
export class LeaseMonitor extends Listeners<[LeaseGenerator, LeaseOutcome, bigint]> {
  record(generator: LeaseGenerator, outcome: LeaseOutcome, ids = 0n): void {
    this.notify(generator, outcome, ids);
  }
}
