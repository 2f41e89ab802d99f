import { DynamicModule, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger as PinoLogger } from 'pino';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { serveDirect } from './common/direct-routes/serve-direct';
import { ErrorFilter, sendError } from './common/error.filter';
import { installJsonBodyParser } from './common/json-body-parser';
import { ShutdownDeadline } from './common/shutdown-deadline';
import { installShutdownGate } from './common/shutdown-gate';
import { refuseMiddleware } from './common/no-middleware';
import { trimForwardingResponseHook } from './common/response-hook-trim';
import { PinoNestLogger, createRootLogger } from './logging/pino-logger';
import { FastifyLogging, LoggingHost } from './logging/fastify-logging';
import { setupOpenApi } from './openapi/openapi.setup';

/** Turns the root module into the application on the given adapter. */
export type AppCompiler = (root: DynamicModule, adapter: FastifyAdapter, options: NestApplicationOptions) => Promise<NestFastifyApplication>;

/** The production compiler: NestFactory.create. */
export const compileApp: AppCompiler = (root, adapter, options) => NestFactory.create<NestFastifyApplication>(root, adapter, options);

/**
 * Builds the Nest application on Fastify (not yet listening). Used by start-service.ts and by the
 * tests, so tests run exactly the production wiring. `rootLogger`: the pino logger every line of the app goes through (start-service.ts passes its
 * own, so the process has one stream to stdout; a new one on stdout unless given). `compile`:
 * how the root module becomes the application (NestFactory.create unless given; a caller may
 * compile it with providers replaced, as Nest's testing module does).
 */
export async function createApp(
  config: AppConfig,
  rootLogger: PinoLogger = createRootLogger(config.log.level),
  compile: AppCompiler = compileApp,
): Promise<NestFastifyApplication> {
  const logging = new FastifyLogging(config.log.level, rootLogger);
  const adapter = new FastifyAdapter({
    ...logging.options,
    bodyLimit: config.http.bodyLimit,
    routerOptions: { maxParamLength: 512 },
    // Router errors (a malformed %-escape, a path parameter over maxParamLength) in our shape too.
    // Their requests' context is made with Fastify itself, before logging.install: their logger too.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      logging.ensure(request, reply);
      void sendError(reply, error);
    },
    // Behind a load balancer: keep-alive longer than typical LB idle timeouts.
    keepAliveTimeout: 65_000,
    // Requests arriving while closing get our JSON 503 from the shutdown gate instead.
    return503OnClosing: false,
    // No Nest middleware in this app: without @fastify/middie no request runs its onRequest hook,
    // and the direct routes can take over their hooks (common/direct-routes/direct-lifecycle.ts).
    // A middleware added later fails the start with a message saying so (refuseMiddleware).
    skipMiddie: true,
  });
  // request.log made on first use for the routes added from here on; none at all on the direct
  // routes (logging/fastify-logging.ts).
  logging.install(adapter.getInstance<LoggingHost>());
  refuseMiddleware(adapter);
  // Nest's no-op onResponse hook would put two listeners on every response (common/response-hook-trim.ts).
  trimForwardingResponseHook(adapter);
  const app = await compile(AppModule.forRoot(config), adapter, {
    // Structured JSON lines (pino); no per-request line unless LOG_LEVEL is debug or verbose.
    logger: new PinoNestLogger(rootLogger),
    bufferLogs: false,
    // Fastify's JSON parser, with an empty body accepted (installJsonBodyParser), instead of Nest's.
    bodyParser: false,
    // A failed creation is thrown to the caller, which reports it in one line (start-service.ts),
    // instead of Nest logging its stack and exiting the process itself.
    abortOnError: false,
  });
  // Also receives Fastify's own errors (bad JSON, content type, body size): Nest routes them here.
  app.useGlobalFilters(new ErrorFilter());
  // Routes marked @DirectRoute() (the ID routes) skip Nest's per-request pipeline (docs/performance.md).
  serveDirect(app);
  installJsonBodyParser(adapter.getInstance());
  app.enableShutdownHooks();
  // With the shutdown hooks, not before: a signal during the start is start-service.ts's.
  app.get(ShutdownDeadline).armOnSignals();
  setupOpenApi(app);
  // The app's first check (common/app-hooks.ts): the request id echo and the gate (common/shutdown-gate.ts).
  installShutdownGate(app);
  return app;
}
