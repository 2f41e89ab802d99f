import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { NumberGenerator } from './core/number-generator';

/** At shutdown, before the database pool closes: no new preloads, and the ones in flight settle. */
@Injectable()
export class NumberShutdown implements BeforeApplicationShutdown {
  constructor(private readonly generator: NumberGenerator) {}

  beforeApplicationShutdown(): Promise<void> {
    return this.generator.close();
  }
}
