import { ConfigError } from '../../src/config/config.error';
import { loadConfig } from '../../src/config/load-config';

/** Asserts that `loadConfig` refuses `name=value` with a ConfigError naming the variable. */
export function expectConfigError(name: string, value: string, extraEnv: Record<string, string> = {}): void {
  let error: unknown;
  try {
    loadConfig({ ...extraEnv, [name]: value });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).variable).toBe(name);
  expect((error as Error).message).toContain(name);
}
