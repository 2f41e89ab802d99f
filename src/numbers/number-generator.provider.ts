import { Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { TEST_HOOKS, TestHooks } from '../common/test-hooks';
import { InstanceClock, systemClock } from './core/number-clock';
import { NumberGenerator } from './core/number-generator';
import { NumberMonitor } from './number-monitor';
import { NumberSequenceRepository } from './number-sequence.repository';

/** The instance's clocks, both read `offsetMs` off (the clock-offset test hook: another machine's clocks). */
function clockOf(hooks: TestHooks): InstanceClock {
  const offset = hooks.clockOffsetMs;
  if (offset === 0) {
    return systemClock;
  }
  return {
    now: () => {
      const t = systemClock.now();
      return { mono: t.mono + offset, wall: t.wall + offset };
    },
  };
}

/** The one NumberGenerator of this instance: the instance's clocks, `number_seq`, the monitor. */
export const numberGeneratorProvider: Provider = {
  provide: NumberGenerator,
  inject: [APP_CONFIG, NumberSequenceRepository, NumberMonitor, TEST_HOOKS],
  useFactory: (config: AppConfig, repo: NumberSequenceRepository, monitor: NumberMonitor, hooks: TestHooks): NumberGenerator =>
    new NumberGenerator(repo, {
      clock: clockOf(hooks),
      marginMs: config.numbers.clockMarginMs,
      trustMs: config.numbers.clockTrustMs,
      boundaryWindowMs: config.numbers.boundaryWindowMs,
      onEvent: (event) => monitor.record(event),
    }),
};
