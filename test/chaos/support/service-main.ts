import 'reflect-metadata';
import { loadConfigOrExit } from '../../../src/config/load-config-or-exit';
import { startService } from '../../../src/start-service';
import { compileWith, faultOverrides } from '../../support/provider-overrides';
import { faultsFromEnv } from './fault-env';

/**
 * The chaos suite's entry point of a service process: src/main.ts, with providers replaced by the
 * faults read from TEST_REFILL_DELAY_MS and TEST_CLOCK_OFFSET_MS (fault-env.ts, provider-overrides.ts). Built with the service by ensureBuilt (service-process.ts).
 */
startService(loadConfigOrExit(process.env), { compile: compileWith(faultOverrides(faultsFromEnv(process.env))) }).catch(() => process.exit(1));
