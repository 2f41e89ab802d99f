import { Gauge, Registry } from 'prom-client';
import { SegmentBufferView } from '../segment/core/segment-buffer';
import { AppFamiliesText } from './core/app-families';
import { AppQueueSummary, ShardRowView, shardRowsOf } from './core/app-queue-summary';
import { ShardFamilies } from './shard-families';
import { StateSnapshot } from './state-snapshot';

/** Text written after prom-client's exposition for one scrape, given whether this instance is the metrics leader. */
export type TextSource = (leader: boolean) => Promise<string>;

/**
 * Gauges of the service's state, read on scrape (never on the request path) from `snapshot`,
 * which computes at most once per METRICS_STATE_TTL_MS and is shared by the gauges of one scrape
 * and by concurrent scrapes. Each gauge resets and sets its values in one synchronous step
 * after the await, so a concurrent scrape never sees a half-filled gauge.
 *
 * The queue's gauges are per app, written as text after prom-client's exposition (`addText`,
 * AppFamiliesText: once per state read, not per scrape); shared state (what every instance reads
 * alike from Redis and MySQL) only on the metrics leader, this instance's own refill sizes always.
 * With `families` (METRICS_PER_SHARD=true) the per-shard families are added as well.
 */
export function registerStateMetrics(
  register: Registry,
  snapshot: () => Promise<StateSnapshot>,
  addText: (source: TextSource) => void,
  families: ShardFamilies | null,
): void {
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
  const appFamilies = new AppFamiliesText<AppQueueSummary>([
    { name: 'shardleaf_queue_length', help: 'Indexes queued in the Redis lists of an app (all its shards)', shared: true, value: (a) => a.queueLength },
    {
      name: 'shardleaf_queue_refill_size',
      help: "IDs this instance's next refill of the app's busiest shard takes (the step, doubled while the shard is hot, up to QUEUE_REFILL_MAX_SIZE)",
      shared: false,
      value: (a) => a.refillSize,
    },
    {
      name: 'shardleaf_queue_lowest_fill_ratio',
      help: "The lowest, over an app's shards, of the IDs queued in the shard's list divided by the shard's next refill size (below 0.1: a list nearly empty)",
      shared: true,
      value: (a) => a.lowestFillRatio,
    },
    {
      name: 'shardleaf_queue_remaining_capacity',
      help: 'IDs an app can still hand out under max_limit_id (queued + not yet allocated)',
      shared: true,
      value: (a) => a.remaining,
    },
    {
      name: 'shardleaf_queue_lowest_shard_capacity',
      help: 'IDs left (queued + not yet allocated) in the app shard with the fewest: shardleaf_queue_lowest_shard names it',
      shared: true,
      value: (a) => a.lowestRemaining,
    },
    { name: 'shardleaf_queue_lowest_shard', help: 'The app shard with the fewest IDs left (its shard number)', shared: true, value: (a) => a.lowestShard },
  ]);
  addText(async (leader) => appFamilies.render((await snapshot()).apps, leader));
  if (families !== null) {
    // Row objects for the families of one read, made once (16,384 at 256 apps: this mode only).
    let kept: { shards: StateSnapshot['shards']; rows: ShardRowView[] } | null = null;
    const rows = async (): Promise<ShardRowView[]> => {
      const shards = (await snapshot()).shards;
      if (kept?.shards !== shards) {
        kept = { shards, rows: shardRowsOf(shards) };
      }
      return kept.rows;
    };
    families.add({
      name: 'shardleaf_queue_shard_length',
      help: 'Indexes queued in the Redis list of an app shard (METRICS_PER_SHARD=true)',
      shared: true,
      rows,
      value: (r) => r.queueLength,
    });
    families.add({
      name: 'shardleaf_queue_shard_refill_size',
      help: "IDs this instance's next refill of an app shard takes (METRICS_PER_SHARD=true)",
      shared: false,
      rows,
      value: (r) => r.refillSize,
    });
    families.add({
      name: 'shardleaf_queue_shard_remaining_capacity',
      help: 'IDs an app shard can still hand out under max_limit_id, queued + not yet allocated (METRICS_PER_SHARD=true)',
      shared: true,
      rows,
      value: (r) => r.remaining,
    });
  }
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
