import { NumberEvent } from './core/number-generator';

export type NumberListener = (event: NumberEvent) => void;

/** In-process notifications of the number generator's allocations and clock readings, for metrics. */
export class NumberMonitor {
  private listeners: NumberListener[] = [];

  subscribe(listener: NumberListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  record(event: NumberEvent): void {
    for (const listener of this.listeners) {
      listener(event);
    }
  }
}
