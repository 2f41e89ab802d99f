import { InstanceClock } from './number-clock';
import { ValidityOptions } from './number-segment';

/** How a NumberGenerator is set up (number-generator.ts). */
export interface NumberGeneratorOptions extends ValidityOptions {
  clock: InstanceClock;
  /** Closer than this to a period's end: allocate exactly the demand and preload nothing (ms). */
  boundaryWindowMs: number;
  /** An unknown key is answered from memory this long after the database said so (ms). */
  missCacheMs?: number;
  onEvent?: (event: NumberEvent) => void;
}

/** What the generator did, for metrics. */
export type NumberEvent =
  | { kind: 'issued'; key: string; count: number }
  | { kind: 'allocation'; outcome: 'allocated' | 'exhausted' | 'not_found' | 'failed'; size: bigint }
  | { kind: 'clock_read'; outcome: 'confirmed' | 'period_over' | 'not_found' | 'failed' };
