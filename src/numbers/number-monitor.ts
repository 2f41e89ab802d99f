import { Listeners } from '../common/listeners';
import { NumberEvent } from './core/number-generator';

export type NumberListener = (event: NumberEvent) => void;

/** In-process notifications of the number generator's allocations and clock readings, for metrics. */
export class NumberMonitor extends Listeners<[NumberEvent]> {
  record(event: NumberEvent): void {
    this.notify(event);
  }
}
