import { Logger, Provider } from '@nestjs/common';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { SegmentIdGenerator } from './core/segment-id-generator';
import { systemSegmentClock } from './core/segment-clock';
import { LeafAllocRepository } from './leaf-alloc.repository';

/** The one SegmentIdGenerator of this instance, on the real clock and `leaf_alloc`. */
export const segmentGeneratorProvider: Provider = {
  provide: SegmentIdGenerator,
  inject: [SEGMENT_CONFIG, LeafAllocRepository],
  useFactory: (segment: SegmentConfig, repo: LeafAllocRepository): SegmentIdGenerator => {
    const logger = new Logger(SegmentIdGenerator.name);
    return new SegmentIdGenerator(repo, {
      clock: systemSegmentClock,
      maxStep: segment.maxStep,
      loadTimeoutMs: segment.loadTimeoutMs,
      warn: (message) => logger.warn(message),
    });
  },
};
