import { Gauge, Registry } from 'prom-client';
import { unallocated } from '../queue-id/core/refill-policy';
import { maxIndexFor } from '../queue-id/core/queue-id-layout';
import { QueueKeys } from '../queue-id/core/queue-keys';
import { AppRegistry } from '../queue-id/core/app-registry';
import { IdAllocRepository } from '../queue-id/id-alloc.repository';
import { lengthsOf } from '../infra/redis/redis-key-ops';
import { RedisClient } from '../infra/redis/redis.tokens';
import { SegmentIdGenerator } from '../segment/core/segment-id-generator';

export interface StateSources {
  redis: RedisClient;
  keys: QueueKeys;
  registry: AppRegistry;
  repo: IdAllocRepository;
  /** null when segment mode is off. */
  segment: () => SegmentIdGenerator | null;
  snowflake: () => { mode: string; workerId: number | null; serving: boolean };
}

/**
 * Gauges read on scrape, never on the request path: queue lengths (one pipelined LLEN sweep),
 * remaining capacity per app (id_alloc + lengths), segment buffers, snowflake worker state.
 */
export function registerStateMetrics(register: Registry, src: StateSources): void {
  new Gauge({
    name: 'shardleaf_queue_length',
    help: 'Indexes queued in the Redis list of an app shard',
    labelNames: ['app', 'shard'],
    registers: [register],
    async collect() {
      this.reset();
      const targets = src.registry.all().flatMap((app) => [...app.shards.keys()].map((shard) => ({ app: app.appId, shard })));
      const lengths = await lengthsOf(src.redis, targets.map((t) => src.keys.list(t.app, t.shard)));
      targets.forEach((t, i) => {
        const [err, len] = lengths[i];
        if (!err) {
          this.set({ app: t.app, shard: t.shard }, len);
        }
      });
    },
  });
  new Gauge({
    name: 'shardleaf_queue_remaining_capacity',
    help: 'IDs an app can still hand out under max_limit_id (queued + not yet allocated)',
    labelNames: ['app'],
    registers: [register],
    async collect() {
      this.reset();
      const rows = await src.repo.findAll();
      const lengths = await lengthsOf(src.redis, rows.map((r) => src.keys.list(r.appId, r.shardId)));
      const perApp = new Map<number, bigint>();
      rows.forEach((r, i) => {
        const left = BigInt(lengths[i][1]) + unallocated(r.maxId, maxIndexFor(r.appId, r.shardId, r.maxLimitId));
        perApp.set(r.appId, (perApp.get(r.appId) ?? 0n) + left);
      });
      for (const [app, left] of perApp) {
        this.set({ app }, Number(left));
      }
    },
  });
  const segmentGauge = (name: string, help: string, read: (v: ReturnType<SegmentIdGenerator['views']>[number]) => number[]) =>
    new Gauge({
      name,
      help,
      labelNames: ['tag', 'buffer'],
      registers: [register],
      collect() {
        this.reset();
        for (const view of src.segment()?.views() ?? []) {
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
    collect() {
      this.reset();
      for (const view of src.segment()?.views() ?? []) {
        this.set({ tag: view.key }, view.nextReady ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'shardleaf_snowflake_worker_id',
    help: 'Worker id in use by this instance (-1 when none is held)',
    labelNames: ['mode'],
    registers: [register],
    collect() {
      this.reset();
      const s = src.snowflake();
      this.set({ mode: s.mode }, s.workerId ?? -1);
    },
  });
  new Gauge({
    name: 'shardleaf_snowflake_serving',
    help: '1 while this instance holds a worker id (with its lease, in zk_recycle) and may issue snowflake IDs',
    labelNames: ['mode'],
    registers: [register],
    collect() {
      this.reset();
      const s = src.snowflake();
      this.set({ mode: s.mode }, s.serving ? 1 : 0);
    },
  });
}
