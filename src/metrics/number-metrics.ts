import { Counter, Gauge, Registry } from 'prom-client';
import { NumberMonitor } from '../numbers/number-monitor';
import { NumberStatus } from '../numbers/number-status';

/**
 * Formatted numbers: issued per format, allocations and clock readings by outcome (counted from
 * the generator's events), and what this instance still holds per format and how much of each
 * format's running period is allocated (memory, read on scrape).
 * Returns the unsubscribe function.
 */
export function registerNumberMetrics(register: Registry, monitor: NumberMonitor, status: NumberStatus): () => void {
  const issued = new Counter({
    name: 'shardleaf_numbers_issued_total',
    help: 'Formatted numbers handed out by this instance, by format key',
    labelNames: ['format'],
    registers: [register],
  });
  const allocations = new Counter({
    name: 'shardleaf_number_allocations_total',
    help: 'Segment allocations of number formats (number_seq), by outcome: allocated, exhausted (the period is used up), not_found, failed (database)',
    labelNames: ['outcome'],
    registers: [register],
  });
  const readings = new Counter({
    name: 'shardleaf_number_clock_reads_total',
    help: 'Readings of the database clock to extend a segment past its proof, by outcome: confirmed, period_over (its rest became a gap), not_found, failed',
    labelNames: ['outcome'],
    registers: [register],
  });
  for (const outcome of ['allocated', 'exhausted', 'not_found', 'failed']) {
    allocations.inc({ outcome }, 0);
  }
  for (const outcome of ['confirmed', 'period_over', 'not_found', 'failed']) {
    readings.inc({ outcome }, 0);
  }
  new Gauge({
    name: 'shardleaf_number_segment_left',
    help: "Sequences left in this instance's segments of a number format (current and next)",
    labelNames: ['format'],
    registers: [register],
    collect() {
      this.reset();
      for (const view of status.buffers()) {
        const left = [view.current, view.next].reduce((n, s) => n + (s === null ? 0 : Number(s.left)), 0);
        this.set({ format: view.key }, left);
      }
    },
  });
  new Gauge({
    name: 'shardleaf_number_period_used_ratio',
    help:
      "Share of a number format's current period (capacity: what its sequence digits hold) allocated by all instances, " +
      "as of this instance's latest allocation in it; 1 once used up (410 NUMBER_EXHAUSTED). No series once the period ended",
    labelNames: ['format'],
    registers: [register],
    collect() {
      this.reset();
      for (const { key, used } of status.periodUse()) {
        this.set({ format: key }, used);
      }
    },
  });
  return monitor.subscribe((event) => {
    switch (event.kind) {
      case 'issued':
        issued.inc({ format: event.key }, event.count);
        break;
      case 'allocation':
        allocations.inc({ outcome: event.outcome });
        break;
      case 'clock_read':
        readings.inc({ outcome: event.outcome });
        break;
      default:
        break;
    }
  });
}
