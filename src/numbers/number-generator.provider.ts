import { Provider } from '@nestjs/common';
import { NUMBERS_CONFIG } from '../config/config-tokens';
import { NumbersConfig } from '../config/numbers-config';
import { InstanceClock, systemClock } from './core/number-clock';
import { NumberGenerator } from './core/number-generator';
import { NumberMonitor } from './number-monitor';
import { NumberSequenceRepository } from './number-sequence.repository';

/** The instance's clocks (the system's; a test may replace them). */
export const NUMBER_CLOCK = Symbol('NUMBER_CLOCK');

export const numberClockProvider: Provider = { provide: NUMBER_CLOCK, useValue: systemClock };

/** The one NumberGenerator of this instance: the instance's clocks, `number_seq`, the monitor. */
export const numberGeneratorProvider: Provider = {
  provide: NumberGenerator,
  inject: [NUMBERS_CONFIG, NumberSequenceRepository, NumberMonitor, NUMBER_CLOCK],
  useFactory: (config: NumbersConfig, repo: NumberSequenceRepository, monitor: NumberMonitor, clock: InstanceClock): NumberGenerator =>
    new NumberGenerator(repo, {
      clock,
      marginMs: config.clockMarginMs,
      trustMs: config.clockTrustMs,
      boundaryWindowMs: config.boundaryWindowMs,
      onEvent: (event) => monitor.record(event),
    }),
};
