import { Faults } from '../../support/provider-overrides';

/**
 * The chaos suite's injected faults, from the environment of a service process it starts (test
 * entry point service-main.ts replaces providers with them; the service's own src/main.ts never
 * reads these):
 *
 * | variable               | default | effect |
 * |------------------------|---------|--------|
 * | `TEST_REFILL_DELAY_MS` | `0`     | a refill waits this long between its `id_alloc` commit and its push, and logs `TEST_REFILL_DELAY_MS: holding <list> <from>..<to>` (0..600000) |
 * | `TEST_CLOCK_OFFSET_MS` | `0`     | added to the snowflake clock, negative = behind (-86400000..86400000) |
 *
 * A bad value throws an Error naming the variable.
 */
export function faultsFromEnv(env: Record<string, string | undefined>): Faults {
  return {
    refillDelayMs: readInteger(env, 'TEST_REFILL_DELAY_MS', 0, 600_000),
    clockOffsetMs: readInteger(env, 'TEST_CLOCK_OFFSET_MS', -86_400_000, 86_400_000),
  };
}

function readInteger(env: Record<string, string | undefined>, name: string, min: number, max: number): number {
  const value = env[name]?.trim() ?? '';
  if (value === '') {
    return 0;
  }
  const n = Number(value);
  if (!/^-?[0-9]+$/.test(value) || n < min || n > max) {
    throw new Error(`${name} must be an integer ${min}..${max}, got '${value}'`);
  }
  return n;
}
