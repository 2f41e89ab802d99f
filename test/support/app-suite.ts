import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ProviderOverride } from './provider-overrides';
import { TestEnv, createTestEnv, startApp } from './test-env';

/** A suite's environment and apps; see `appSuite`. */
export interface AppSuite {
  /** This suite's database and key prefix (from the suite's first beforeAll on). */
  readonly env: TestEnv;
  /** The first app `start` started. */
  readonly app: NestFastifyApplication;
  /** Starts an app on `env.config(overrides)` (with `providers` replaced); the suite closes it at the end. */
  start(overrides?: Record<string, string>, providers?: readonly ProviderOverride[]): Promise<NestFastifyApplication>;
  /** Runs `teardown` at the end of the suite, before what was deferred earlier (apps included). */
  defer(teardown: () => unknown): void;
}

/**
 * The one way a suite starts the app: call it at the top of a `describe`. It creates the suite's
 * TestEnv before the suite's own `beforeAll` runs, and after the last test undoes everything in
 * reverse order: what the suite deferred and the apps it started, then the env (database, keys).
 * A suite that needs servers of its own starts them in its `beforeAll` and defers their stop.
 */
export function appSuite(name: string): AppSuite {
  let env: TestEnv | null = null;
  let first: NestFastifyApplication | null = null;
  const teardowns: Array<() => unknown> = [];

  beforeAll(async () => {
    env = await createTestEnv(name);
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    for (const teardown of teardowns.reverse()) {
      await Promise.resolve()
        .then(teardown)
        .catch((err: unknown) => errors.push(err));
    }
    await env?.cleanup();
    if (errors.length > 0) {
      throw errors[0];
    }
  });

  const suite: AppSuite = {
    get env(): TestEnv {
      if (!env) {
        throw new Error(`the env of suite ${name} is not created yet (use it in a hook or a test)`);
      }
      return env;
    },
    get app(): NestFastifyApplication {
      if (!first) {
        throw new Error(`suite ${name} has not started an app`);
      }
      return first;
    },
    async start(overrides = {}, providers) {
      const app = await startApp(suite.env.config(overrides), providers);
      teardowns.push(() => app.close());
      first ??= app;
      return app;
    },
    defer(teardown) {
      teardowns.push(teardown);
    },
  };
  return suite;
}
