import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppCompiler, compileApp } from '../../src/bootstrap';
import { systemClock as numberSystemClock } from '../../src/numbers/core/number-clock';
import { NUMBER_CLOCK } from '../../src/numbers/number-generator.provider';
import { SegmentAllocation } from '../../src/queue-id/refill/segment-allocation';
import { offsetClock } from '../../src/snowflake/core/clock';
import { SNOWFLAKE_BASE_CLOCK } from '../../src/snowflake/snowflake.tokens';
import { heldSegmentAllocation } from './held-allocations';

/** One provider of the app replaced by a test: by a value, or by a class (constructed with the original's dependencies). */
export type ProviderOverride = { provide: unknown; useValue: unknown } | { provide: unknown; useClass: new (...args: never[]) => unknown };

/**
 * The app's compiler (bootstrap.ts) with providers replaced: Nest's testing module compiles the
 * same root module, then builds the application on the same adapter and options.
 */
export function compileWith(overrides: readonly ProviderOverride[] = []): AppCompiler {
  if (overrides.length === 0) {
    return compileApp;
  }
  return async (root, adapter, options) => {
    const builder = Test.createTestingModule({ imports: [root] });
    for (const o of overrides) {
      if ('useValue' in o) {
        builder.overrideProvider(o.provide).useValue(o.useValue);
      } else {
        builder.overrideProvider(o.provide).useClass(o.useClass);
      }
    }
    const moduleRef = await builder.compile();
    return moduleRef.createNestApplication<NestFastifyApplication>(adapter, options);
  };
}

/** Faults a test injects into an app by replacing providers (faultOverrides). */
export interface Faults {
  /** A refill waits this long (ms) between its id_alloc allocation and its push, and logs the held range. */
  readonly refillDelayMs: number;
  /** Added to the snowflake clock and to both clocks of the number generator (ms; negative = behind). */
  readonly clockOffsetMs: number;
}

export const NO_FAULTS: Faults = Object.freeze({ refillDelayMs: 0, clockOffsetMs: 0 });

/** The provider replacements of `faults` (none for NO_FAULTS). */
export function faultOverrides(faults: Faults): ProviderOverride[] {
  const out: ProviderOverride[] = [];
  if (faults.refillDelayMs > 0) {
    out.push({ provide: SegmentAllocation, useClass: heldSegmentAllocation(faults.refillDelayMs) });
  }
  const offset = faults.clockOffsetMs;
  if (offset !== 0) {
    out.push({ provide: SNOWFLAKE_BASE_CLOCK, useValue: offsetClock(offset) });
    out.push({
      provide: NUMBER_CLOCK,
      useValue: {
        now: () => {
          const t = numberSystemClock.now();
          return { mono: t.mono + offset, wall: t.wall + offset };
        },
      },
    });
  }
  return out;
}
