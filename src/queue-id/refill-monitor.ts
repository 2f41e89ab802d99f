/** How a refill (one segment from id_alloc into a Redis list) ended. */
export type RefillOutcome = 'refilled' | 'exhausted' | 'failed';
/**
 * What asked for it: the cron sweep or an admin refill (`sweep`), a pop that left the list at or
 * below its threshold (`ahead`, in the background), or an empty list under a request (`demand`).
 */
export type RefillTrigger = 'sweep' | 'ahead' | 'demand';

export type RefillListener = (trigger: RefillTrigger, outcome: RefillOutcome, seconds: number) => void;

/**
 * In-process notifications of finished refills, for metrics. No framework imports; recording
 * costs one call per listener (none unless metrics are wired).
 */
export class RefillMonitor {
  private listeners: RefillListener[] = [];

  subscribe(listener: RefillListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  record(trigger: RefillTrigger, outcome: RefillOutcome, startedAt: bigint): void {
    if (this.listeners.length === 0) {
      return;
    }
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    for (const listener of this.listeners) {
      listener(trigger, outcome, seconds);
    }
  }
}
