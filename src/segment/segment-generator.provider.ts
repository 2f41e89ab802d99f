import { Logger, Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SegmentIdGenerator } from './core/segment-id-generator';
import { systemSegmentClock } from './core/segment-clock';
import { LeafAllocRepository } from './leaf-alloc.repository';

/** The one SegmentIdGenerator of this instance, on the real clock and `leaf_alloc`. */
export const segmentGeneratorProvider: Provider = {
  provide: SegmentIdGenerator,
  inject: [APP_CONFIG, LeafAllocRepository],
  useFactory: (config: AppConfig, repo: LeafAllocRepository): SegmentIdGenerator => {
    const logger = new Logger(SegmentIdGenerator.name);
    return new SegmentIdGenerator(repo, {
      clock: systemSegmentClock,
      maxStep: config.segment.maxStep,
      loadTimeoutMs: config.segment.loadTimeoutMs,
      warn: (message) => logger.warn(message),
    });
  },
};
