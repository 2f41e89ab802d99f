import { Gauge, Registry } from 'prom-client';
import { SegmentBufferView } from '../segment/core/segment-buffer';
import { SlicedRegistry } from './sliced-registry';
import { StateSnapshot } from './state-snapshot';

/**
 * Gauges of the service's state, read on scrape (never on the request path) from `snapshot`,
 * which computes at most once per METRICS_STATE_TTL_MS and is shared by the gauges of one scrape
 * and by concurrent scrapes. Each gauge resets and sets its values in one synchronous step
 * after the await, so a concurrent scrape never sees a half-filled gauge.
 */
export function registerStateMetrics(register: Registry, snapshot: () => Promise<StateSnapshot>): void {
  new Gauge({
    name: 'shardleaf_backend_up',
    help: '1 when the last read of the state gauges reached the backend (mysql: the SELECT of id_alloc; redis: every LLEN), else 0',
    labelNames: ['backend'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      this.set({ backend: 'mysql' }, s.backends.mysql ? 1 : 0);
      this.set({ backend: 'redis' }, s.backends.redis ? 1 : 0);
    },
  });
  // One series per app shard (16,384 at 256 apps): in a SlicedRegistry written in slices between
  // event-loop turns, once per snapshot (sliced-registry.ts); the collects serve `get()`.
  const queueLengthText = { name: 'shardleaf_queue_length', help: 'Indexes queued in the Redis list of an app shard' };
  const queueLength = new Gauge({
    ...queueLengthText,
    labelNames: ['app', 'shard'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const q of s.queueLengths) {
        this.set({ app: q.app, shard: q.shard }, q.length);
      }
    },
  });
  const refillSizeText = {
    name: 'shardleaf_queue_refill_size',
    help: "IDs this instance's next refills of an app shard take (the step, doubled while the shard is hot, up to QUEUE_REFILL_MAX_SIZE)",
  };
  const refillSize = new Gauge({
    ...refillSizeText,
    labelNames: ['app', 'shard'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const r of s.refillSizes) {
        this.set({ app: r.app, shard: r.shard }, r.size);
      }
    },
  });
  if (register instanceof SlicedRegistry) {
    register.renderShardGauge(queueLength, queueLengthText, snapshot, (s) => s.queueLengths, (q) => q.length);
    register.renderShardGauge(refillSize, refillSizeText, snapshot, (s) => s.refillSizes, (r) => r.size);
  }
  new Gauge({
    name: 'shardleaf_queue_remaining_capacity',
    help: 'IDs an app can still hand out under max_limit_id (queued + not yet allocated)',
    labelNames: ['app'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const r of s.remaining) {
        this.set({ app: r.app }, Number(r.left));
      }
    },
  });
  const segmentGauge = (name: string, help: string, read: (v: SegmentBufferView) => number[]) =>
    new Gauge({
      name,
      help,
      labelNames: ['tag', 'buffer'],
      registers: [register],
      async collect() {
        const s = await snapshot();
        this.reset();
        for (const view of s.segment) {
          const [current, next] = read(view);
          this.set({ tag: view.key, buffer: 'current' }, current);
          this.set({ tag: view.key, buffer: 'next' }, next);
        }
      },
    });
  segmentGauge('shardleaf_segment_buffer_remaining', 'IDs left in each segment buffer of a tag (max - value)', (v) => {
    const left = (value: string, max: string) => Math.max(0, Number(BigInt(max) - BigInt(value)));
    const b0 = left(v.value0, v.max0);
    const b1 = left(v.value1, v.max1);
    return v.pos === 0 ? [b0, v.nextReady ? b1 : 0] : [b1, v.nextReady ? b0 : 0];
  });
  segmentGauge('shardleaf_segment_buffer_step', 'Step of each segment buffer of a tag', (v) =>
    v.pos === 0 ? [v.step0, v.step1] : [v.step1, v.step0],
  );
  new Gauge({
    name: 'shardleaf_segment_next_ready',
    help: '1 when the next segment of a tag is loaded',
    labelNames: ['tag'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const view of s.segment) {
        this.set({ tag: view.key }, view.nextReady ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'shardleaf_snowflake_worker_id',
    help: 'Worker id in use by this instance (-1 when none is held)',
    labelNames: ['mode'],
    registers: [register],
    async collect() {
      const s = (await snapshot()).snowflake;
      this.reset();
      this.set({ mode: s.mode }, s.workerId ?? -1);
    },
  });
  new Gauge({
    name: 'shardleaf_snowflake_serving',
    help: '1 while this instance holds a worker id (with its lease, in zk_recycle) and may issue snowflake IDs',
    labelNames: ['mode'],
    registers: [register],
    async collect() {
      const s = (await snapshot()).snowflake;
      this.reset();
      this.set({ mode: s.mode }, s.serving ? 1 : 0);
    },
  });
}
