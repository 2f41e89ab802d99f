import { Injectable } from '@nestjs/common';
import { NumberBufferView, NumberGenerator } from './core/number-generator';

/** What other modules may read of the number generator (metrics gauges). */
@Injectable()
export class NumberStatus {
  constructor(private readonly generator: NumberGenerator) {}

  buffers(): NumberBufferView[] {
    return this.generator.views();
  }

  /** Per key, the share of its running period's capacity allocated (NumberGenerator.periodUse). */
  periodUse(): Array<{ key: string; used: number }> {
    return this.generator.periodUse();
  }
}
