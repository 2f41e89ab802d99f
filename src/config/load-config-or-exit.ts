import { AppConfig } from './app-config';
import { ConfigError } from './config.error';
import { loadConfig } from './load-config';

/**
 * For the entry points (the service, the migration command): the configuration from the
 * environment, or exit code 2 with the message that names the bad variable.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv): AppConfig {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}
