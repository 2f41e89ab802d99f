import { Injectable } from '@nestjs/common';
import { QueueStatus } from '../queue-id/queue-status';
import { SegmentStatus } from '../segment/segment-status';
import { SnowflakeStatus } from '../snowflake/snowflake-status';

export interface GeneratorReadiness {
  queue: boolean;
  /** null: segment mode is off. */
  segment: boolean | null;
  /** null: snowflake mode is off; false: enabled but not issuing (lease lost, record not extended). */
  snowflake: boolean | null;
  /** Why the snowflake generator is not issuing, when it is enabled and not. */
  snowflakeReason?: string;
}

/**
 * Whether each enabled generator can issue IDs (read by readiness): the queue and segment
 * generators once initialised, snowflake while it is serving (a lost zk_recycle lease or a record
 * that could not be extended makes it not ready). Each feature module exports its own status.
 */
@Injectable()
export class GeneratorState {
  constructor(
    private readonly queue: QueueStatus,
    private readonly segment: SegmentStatus,
    private readonly snowflake: SnowflakeStatus,
  ) {}

  readiness(): GeneratorReadiness {
    const state: GeneratorReadiness = { queue: this.queue.ready, segment: this.segment.ready, snowflake: null };
    const snowflake = this.snowflake.readiness();
    if (snowflake !== null) {
      state.snowflake = snowflake.ready;
      if (!snowflake.ready) {
        state.snowflakeReason = snowflake.reason;
      }
    }
    return state;
  }
}
