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
  /** null: snowflake mode is off. */
  snowflake: boolean | null;
}

/** Whether each enabled generator has initialised (read by readiness, metrics and the dashboard). */
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
    return {
      queue: this.registry.isLoaded,
      segment: this.config.segment.enabled ? this.segmentGenerator.isInitialised : null,
      snowflake: this.config.snowflake.mode === 'off' ? null : this.snowflake.workerId !== null,
    };
  }
}
