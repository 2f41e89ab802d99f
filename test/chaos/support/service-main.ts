import 'reflect-metadata';
import { loadConfigOrExit } from '../../../src/config/load-config-or-exit';
import { startService } from '../../../src/start-service';
import { testHooksFromEnv } from './test-hooks-env';

/**
 * The chaos suite's entry point of a service process: src/main.ts, plus the fault-injection hooks
 * read from TEST_REFILL_DELAY_MS and TEST_CLOCK_OFFSET_MS (test-hooks-env.ts) and handed to
 * startService. Built with the service by ensureBuilt (service-process.ts).
 */
startService(loadConfigOrExit(process.env), { testHooks: testHooksFromEnv(process.env) }).catch(() => process.exit(1));
