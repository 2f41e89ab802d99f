import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from '../../../src/bootstrap';
import { loadConfigOrExit } from '../../../src/config/load-config-or-exit';
import { testHooksFromEnv } from './test-hooks-env';

/**
 * The chaos suite's entry point of a service process: src/main.ts, plus the fault-injection hooks
 * read from TEST_REFILL_DELAY_MS and TEST_CLOCK_OFFSET_MS (test-hooks-env.ts) and handed to
 * createApp. Built with the service by ensureBuilt (service-process.ts).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const app = await createApp(config, testHooksFromEnv(process.env));
  await app.listen(config.http.port, config.http.host);
  new Logger('shardleaf').log(`listening on http://${config.http.host}:${config.http.port}`);
}

main().catch((err: unknown) => {
  console.error('shardleaf failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
