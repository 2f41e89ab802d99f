/**
 * In-process notifications for metrics: listeners subscribe, the code that does the work records.
 * No framework imports; recording costs one call per listener (none unless metrics are wired).
 * The feature monitors (NumberMonitor, LeaseMonitor) extend it with their own event arguments.
 */
export class Listeners<A extends unknown[]> {
  private listeners: ((...args: A) => void)[] = [];

  /** Adds a listener; the returned function removes it. */
  subscribe(listener: (...args: A) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  protected notify(...args: A): void {
    for (const listener of this.listeners) {
      listener(...args);
    }
  }
}
