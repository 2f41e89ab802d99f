import { Inject, Injectable } from '@nestjs/common';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { SegmentBufferView } from './core/segment-buffer';
import { SegmentIdGenerator } from './core/segment-id-generator';

/** What other modules may read of the segment generator's state (readiness, buffer gauges). */
@Injectable()
export class SegmentStatus {
  private readonly enabled: boolean;

  constructor(
    @Inject(SEGMENT_CONFIG) segment: SegmentConfig,
    private readonly generator: SegmentIdGenerator,
  ) {
    this.enabled = segment.enabled;
  }

  /** null when SEGMENT_ENABLED=false; else whether the first read of the tags succeeded. */
  get ready(): boolean | null {
    return this.enabled ? this.generator.isInitialised : null;
  }

  /** Each tag's double buffer; none when segment mode is off. */
  buffers(): SegmentBufferView[] {
    return this.enabled ? this.generator.views() : [];
  }
}
