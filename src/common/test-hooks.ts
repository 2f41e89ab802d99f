import { DynamicModule, Global, Module } from '@nestjs/common';

/**
 * Fault-injection hooks for the tests (the chaos suite starts service processes through its own
 * entry point, test/chaos/support/service-main.ts, which sets them from its environment). The
 * service's own wiring (src/main.ts, `createApp(config)`) never sets them: it gets NO_TEST_HOOKS,
 * and no configuration variable reaches them.
 */
export interface TestHooks {
  /** A refill waits this long (ms) between its id_alloc allocation and its push, and logs the held range. */
  readonly refillDelayMs: number;
  /** Added to the snowflake clock and to both clocks of the number generator (ms; negative = behind). */
  readonly clockOffsetMs: number;
}

/** Injection token of the TestHooks. */
export const TEST_HOOKS = Symbol('TEST_HOOKS');

/** Every hook off: what production runs with. */
export const NO_TEST_HOOKS: TestHooks = Object.freeze({ refillDelayMs: 0, clockOffsetMs: 0 });

/** Makes TEST_HOOKS injectable everywhere; AppModule imports it with NO_TEST_HOOKS unless a test passes others. */
@Global()
@Module({})
export class TestHooksModule {
  static forRoot(hooks: TestHooks): DynamicModule {
    return {
      module: TestHooksModule,
      providers: [{ provide: TEST_HOOKS, useValue: hooks }],
      exports: [TEST_HOOKS],
    };
  }
}
