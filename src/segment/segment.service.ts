import { Inject, Injectable } from '@nestjs/common';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { SegmentIdGenerator } from './core/segment-id-generator';
import { TagDiff } from './core/tag-sync';

/** Leaf's SegmentService: the generator behind the SEGMENT_ENABLED switch. */
@Injectable()
export class SegmentService {
  constructor(
    @Inject(SEGMENT_CONFIG) private readonly segment: SegmentConfig,
    private readonly generator: SegmentIdGenerator,
  ) {}

  get enabled(): boolean {
    return this.segment.enabled;
  }

  /** Throws SEGMENT_DISABLED when segment mode is off (Leaf's ZeroIDGen answered a silent 0). */
  assertEnabled(): void {
    if (!this.enabled) {
      throw new IdGenError(ErrorKind.SegmentDisabled, 'segment mode is disabled on this instance (SEGMENT_ENABLED=false)');
    }
  }

  async get(key: string, count: number): Promise<bigint[]> {
    this.assertEnabled();
    return this.generator.get(key, count);
  }

  sync(): Promise<TagDiff> {
    this.assertEnabled();
    return this.generator.sync();
  }
}
