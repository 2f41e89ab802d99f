import { Type } from '@nestjs/common';
import { ApplicationConfig, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { sendError } from '../error.filter';
import { argReaders, DirectInvoker, DirectReply, DirectRequest, directInvoker } from './direct-route-args';
import { DIRECT_ROUTE_CONFIG_KEY, DIRECT_ROUTE_METADATA } from './direct-route.decorator';
import { appWideRefusals, routeRefusals } from './direct-route-refusals';

/** A method marked `@DirectRoute()`, resolved at start: its instance and its per-request call. */
interface DirectRoute {
  /** `Controller.method`, for messages. */
  name: string;
  invoke: DirectInvoker;
}

/**
 * Serves every controller method marked `@DirectRoute()` straight from Fastify, skipping Nest's
 * per-request pipeline (execution context, parameter resolution, the response controller, the
 * exception zone): about a third of the CPU time of a queue-ID request (docs/performance.md).
 * Nest still registers the route (path, OpenAPI, Fastify hooks such as metrics and the request
 * id); Fastify's `onRoute` hook swaps its handler for the direct call. Errors go through the same
 * `sendError` as the global ErrorFilter (metrics record the error kind there).
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
    // Nest's Fastify copy types the handler; the direct handler needs only DirectRequest/DirectReply.
    options.handler = directHandler(route.invoke, options.url.includes(':'), !options.url.includes('?')) as unknown as typeof options.handler;
    // What the handler throws or rejects with (bad input, a failed pop) and what the route's hooks
    // fail with: sent as the ErrorFilter sends it, with the request id for its log line.
    options.errorHandler = directError as unknown as typeof options.errorHandler;
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
        if (Reflect.getMetadata(DIRECT_ROUTE_METADATA, method) !== true) {
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
        routes.set(method, { name, invoke: directInvoker(wrapper.instance, method, readers) });
      }
    }
  }
  return routes;
}

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

/** A direct route's error handler: the error as its JSON reply (error.filter.ts). */
function directError(error: unknown, request: DirectRequest, reply: DirectReply): void {
  void sendError(reply, error, request.id);
}

/**
 * The route's handler: the controller method's own result (its promise, as it is: Fastify sends
 * what it resolves to), no wrapper. Errors, thrown or rejected, reach `directError` through Fastify.
 * As Nest's Fastify adapter: an empty path parameter is not a match (only a wildcard may be empty).
 * A route's parameter names are the same on every request (`fixedNames`): read once, from its
 * first request's params, then each checked by name (a `for…in` over the params object was
 * ~0.3 µs of the queue single get's CPU, docs/performance.md). Not so with an optional parameter
 * (`/a/:x?` is two routes of the router sharing this handler): read on every request then.
 */
function directHandler(invoke: DirectInvoker, hasParams: boolean, fixedNames: boolean): DirectInvoker {
  if (!hasParams) {
    return invoke;
  }
  let names: string[] | undefined;
  return function direct(request: DirectRequest, reply: DirectReply): unknown {
    const params = request.params;
    if (names === undefined || !fixedNames) {
      names = Object.keys(params).filter((name) => name !== '*');
    }
    for (let i = 0; i < names.length; i++) {
      if (params[names[i]] === '') {
        reply.callNotFound();
        return reply;
      }
    }
    return invoke(request, reply);
  };
}
