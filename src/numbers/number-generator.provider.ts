import { Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { systemClock } from './core/number-clock';
import { NumberGenerator } from './core/number-generator';
import { NumberMonitor } from './number-monitor';
import { NumberSequenceRepository } from './number-sequence.repository';

/** The one NumberGenerator of this instance: the instance's clocks, `number_seq`, the monitor. */
export const numberGeneratorProvider: Provider = {
  provide: NumberGenerator,
  inject: [APP_CONFIG, NumberSequenceRepository, NumberMonitor],
  useFactory: (config: AppConfig, repo: NumberSequenceRepository, monitor: NumberMonitor): NumberGenerator =>
    new NumberGenerator(repo, {
      clock: systemClock,
      marginMs: config.numbers.clockMarginMs,
      trustMs: config.numbers.clockTrustMs,
      boundaryWindowMs: config.numbers.boundaryWindowMs,
      onEvent: (event) => monitor.record(event),
    }),
};
