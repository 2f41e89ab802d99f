import { Injectable } from '@nestjs/common';
import { QueueStatePort } from '../queue-id/queue-state.port';
import { SegmentStatus } from '../segment/segment-status';
import { SnowflakeStatus } from '../snowflake/snowflake-status';
import { summariseApps } from './core/app-queue-summary';
import { StateSnapshot } from './state-snapshot';

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Reads the state behind the gauges (uncached; MetricsService caches): the queue's through its
 * read port, the segment buffers and the snowflake worker from memory; then the per-app summaries,
 * computed once per read.
 */
@Injectable()
export class MetricsStateReader {
  constructor(
    private readonly queue: QueueStatePort,
    private readonly segment: SegmentStatus,
    private readonly snowflake: SnowflakeStatus,
  ) {}

  async read(): Promise<StateSnapshot> {
    // Started by a scrape past the TTL (TtlSnapshot), the read begins after that scrape was written.
    await nextTurn();
    const q = await this.queue.read();
    await nextTurn();
    const snowflake = this.snowflake;
    return {
      at: q.at,
      backends: { mysql: q.mysql, redis: q.redis },
      shards: q.shards,
      apps: summariseApps(q.shards),
      segment: this.segment.buffers(),
      snowflake: { mode: snowflake.mode, workerId: snowflake.workerId, serving: snowflake.serving },
    };
  }
}
