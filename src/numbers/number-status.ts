import { Injectable } from '@nestjs/common';
import { NumberBufferView, NumberGenerator } from './core/number-generator';

/** What other modules may read of the number generator (metrics gauges). */
@Injectable()
export class NumberStatus {
  constructor(private readonly generator: NumberGenerator) {}

  buffers(): NumberBufferView[] {
    return this.generator.views();
  }
}
