/** The generators that hand out leases (snowflake has none: see docs/client.md). */
export type LeaseGenerator = 'queue' | 'segment';
/** How a lease request ended: granted, refused (4xx/410) or failed (503/500). */
export type LeaseOutcome = 'granted' | 'refused' | 'failed';

export type LeaseListener = (generator: LeaseGenerator, outcome: LeaseOutcome, ids: bigint) => void;

/**
 * In-process notifications of lease requests, for metrics (like RefillMonitor). No framework
 * imports; recording costs one call per listener (none unless metrics are wired).
 */
export class LeaseMonitor {
  private listeners: LeaseListener[] = [];

  subscribe(listener: LeaseListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  record(generator: LeaseGenerator, outcome: LeaseOutcome, ids = 0n): void {
    for (const listener of this.listeners) {
      listener(generator, outcome, ids);
    }
  }
}
