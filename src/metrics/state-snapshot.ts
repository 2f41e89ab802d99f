import { ShardSlots } from '../queue-id/queue-state.port';
import { SegmentBufferView } from '../segment/core/segment-buffer';
import { AppQueueSummary } from './core/app-queue-summary';

export interface SnowflakeState {
  mode: string;
  workerId: number | null;
  serving: boolean;
}

/** Everything the state gauges show, read in one go. */
export interface StateSnapshot {
  /** When the reads finished (ms since the epoch). */
  at: number;
  /**
   * Whether this read reached MySQL (the SELECT of id_alloc) and Redis (every LLEN). A failed
   * read leaves its gauges empty instead of failing the scrape, so the counters are still
   * scraped during an outage.
   */
  backends: { mysql: boolean; redis: boolean };
  /** Every shard of id_alloc and of this instance's registry, by slot ((app, shard) order). */
  shards: ShardSlots;
  /** Per app, in app order. */
  apps: AppQueueSummary[];
  segment: SegmentBufferView[];
  snowflake: SnowflakeState;
}
