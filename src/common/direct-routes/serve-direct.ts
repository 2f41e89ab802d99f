import { ApplicationConfig, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Type } from '@nestjs/common';
import { appHooksOf } from '../app-hooks';
import { fastifyLoggingOf } from '../../logging/fastify-logging';
import { argReaders, directInvoker, takesRequestOrReply } from './direct-route-args';
import { DIRECT_ROUTE_CONFIG_KEY, DIRECT_ROUTE_METADATA, DirectRouteOptions } from './direct-route.decorator';
import { DirectRoute, directRoute } from './direct-handler';
import { NestAdapterState, takeOverHooks } from './direct-lifecycle';
import { appWideRefusals, routeRefusals } from './direct-route-refusals';

/**
 * Serves every controller method marked `@DirectRoute()` straight from Fastify, skipping Nest's
 * per-request pipeline (execution context, parameter resolution, the response controller, the
 * exception zone): about a third of the CPU time of a queue-ID request (docs/performance.md).
 * Nest still registers the route (path, OpenAPI, the app's hooks: metrics, the request id, the
 * shutdown gate); Fastify's `onRoute` hook swaps its handler for the direct call, which runs those
 * hooks itself from its first request on (direct-lifecycle.ts). Errors go through the same mapping
 * as the global ErrorFilter's `sendError` (metrics record the error kind there).
 *
 * Everything is resolved here and at route registration, never per request. What the direct
 * call would skip is refused with an error naming the route and the reason: on the route, here;
 * app-wide, when Nest registers the route (app.init/listen), which is also when Nest itself reads
 * them. A marked method Nest registers no route for fails `ready`/`listen`.
 * Call after NestFactory.create, before init/listen.
 */
export function serveDirect(app: NestFastifyApplication): void {
  const routes = declaredRoutes(app);
  const config = applicationConfig(app);
  const fastify = app.getHttpAdapter().getInstance();
  const adapter = app.getHttpAdapter() as unknown as NestAdapterState;
  const hooks = appHooksOf(fastify);
  const logging = fastifyLoggingOf(fastify);
  const served = new Set<DirectRoute>();
  fastify.addHook('onRoute', (options) => {
    const marker = (options.config as Record<symbol, unknown> | undefined)?.[DIRECT_ROUTE_CONFIG_KEY];
    if (marker === undefined) {
      return;
    }
    const route = routes.get(marker);
    if (route === undefined) {
      throw new Error(`${String(options.method)} ${options.url} is marked @DirectRoute() but its controller is not in any module`);
    }
    refuse(route.name, appWideRefusals(config));
    if (options.errorHandler !== undefined) {
      throw new Error(`${route.name} is marked @DirectRoute() but its route has an errorHandler of its own`);
    }
    // No request.log made per request unless the method may log through it (DirectRouteOptions):
    // Fastify's own lines about a request make it first (logging/fastify-logging.ts).
    const quiet = route.requestLogger ? undefined : logging?.withoutRequestLogger;
    if (quiet !== undefined) {
      options.childLoggerFactory = quiet as unknown as typeof options.childLoggerFactory;
    }
    const ensureLogger = quiet !== undefined && logging !== undefined ? logging.ensure.bind(logging) : noLoggerToMake;
    const direct = directRoute(
      route,
      options.url.includes(':'),
      !options.url.includes('?'),
      (request) => takeOverHooks(request, adapter, hooks),
      ensureLogger,
    );
    // Nest's Fastify copy types the route options; the handlers are typed with the service's Fastify.
    options.handler = direct.handler as unknown as typeof options.handler;
    // What the route's hooks fail with, and what Fastify itself fails with while sending: sent as
    // the ErrorFilter sends it, with the request id for its log line.
    options.errorHandler = direct.errorHandler as unknown as typeof options.errorHandler;
    served.add(route);
  });
  fastify.addHook('onReady', async () => {
    const missing = [...routes.values()].filter((route) => !served.has(route)).map((route) => route.name);
    if (missing.length > 0) {
      throw new Error(
        `marked @DirectRoute() but registered by Nest without its marker: ${missing.join(', ')} ` +
          '(a @RouteConfig() applied above @DirectRoute() replaces it: put @DirectRoute() on top)',
      );
    }
  });
}

/** The marked methods of every controller of the app, checked, keyed by the method (the marker). */
function declaredRoutes(app: NestFastifyApplication): Map<unknown, DirectRoute> {
  const routes = new Map<unknown, DirectRoute>();
  const scanner = new MetadataScanner();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | null;
      if (!controller?.prototype) {
        continue;
      }
      const prototype = controller.prototype as Record<string, (...args: unknown[]) => unknown>;
      for (const handler of scanner.getAllMethodNames(prototype)) {
        const method = prototype[handler];
        const options = Reflect.getMetadata(DIRECT_ROUTE_METADATA, method) as DirectRouteOptions | undefined;
        if (options === undefined) {
          continue;
        }
        const name = `${controller.name}.${handler}`;
        const refusals = routeRefusals(controller, method);
        const readers = argReaders(controller, handler, refusals);
        if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
          refusals.push('its controller is request-scoped or transient (one instance per request)');
        }
        if (routes.has(method)) {
          refusals.push(`the same method is also marked on ${routes.get(method)?.name}: mark it on one controller only`);
        }
        refuse(name, refusals);
        routes.set(method, {
          name,
          invoke: directInvoker(wrapper.instance, method, readers),
          requestLogger: options.requestLogger ?? takesRequestOrReply(controller, handler),
        });
      }
    }
  }
  return routes;
}

function noLoggerToMake(): void {}

function refuse(name: string, refusals: string[]): void {
  if (refusals.length > 0) {
    throw new Error(`${name} is marked @DirectRoute() but cannot be served directly: ${refusals.join('; ')}`);
  }
}

/**
 * Nest keeps the app-wide enhancers in the ApplicationConfig a NestApplication holds as `config`,
 * which is not public API: if a Nest release moves it, start fails here rather than skip the check.
 */
function applicationConfig(app: NestFastifyApplication): ApplicationConfig {
  const config = (app as unknown as { config?: unknown }).config;
  if (!(config instanceof ApplicationConfig)) {
    throw new Error('serveDirect: cannot read the app-wide enhancers of this Nest version (NestApplication.config)');
  }
  return config;
}

