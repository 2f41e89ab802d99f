import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppRegistry } from '../queue-id/core/app-registry';
import { SegmentIdGenerator } from '../segment/core/segment-id-generator';
import { SnowflakeService } from '../snowflake/snowflake.service';

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
 * Whether each enabled generator can issue IDs (read by readiness, metrics and the dashboard): the
 * queue and segment generators once initialised, snowflake while it is serving (a lost zk_recycle
 * lease or a record that could not be extended makes it not ready).
 */
@Injectable()
export class GeneratorState {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: AppRegistry,
    private readonly snowflake: SnowflakeService,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The segment generator lives inside SegmentModule; it is looked up, not re-exported. */
  get segmentGenerator(): SegmentIdGenerator {
    return this.moduleRef.get(SegmentIdGenerator, { strict: false });
  }

  readiness(): GeneratorReadiness {
    const state: GeneratorReadiness = {
      queue: this.registry.isLoaded,
      segment: this.config.segment.enabled ? this.segmentGenerator.isInitialised : null,
      snowflake: null,
    };
    if (this.config.snowflake.mode !== 'off') {
      const reason = this.snowflake.notServingReason();
      state.snowflake = reason === null;
      if (reason !== null) {
        state.snowflakeReason = reason;
      }
    }
    return state;
  }
}
