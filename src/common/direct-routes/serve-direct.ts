import { ApplicationConfig, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger, Type } from '@nestjs/common';
import { tracingChannel } from 'node:diagnostics_channel';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appHooksOf } from '../app-hooks';
import { prepareError, sendError } from '../error.filter';
import { argReaders, DirectInvoker, directInvoker } from './direct-route-args';
import { DIRECT_ROUTE_CONFIG_KEY, DIRECT_ROUTE_METADATA } from './direct-route.decorator';
import { NestAdapterState, OwnHooks, TakenOver, takeOverHooks } from './direct-lifecycle';
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
    const direct = directRoute(route, options.url.includes(':'), !options.url.includes('?'), (request) => takeOverHooks(request, adapter, hooks));
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

/** Fastify's channel of route handlers (handle-request.js, wrap-thenable.js): watched by APM tools. */
const handlerChannel = tracingChannel('fastify.request.handler');

const log = new Logger('DirectRoutes');

/** A request of a direct route: path parameters and query values as strings (what the readers take). */
type Request = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown> }>;

/** A direct route's handler and error handler. */
interface DirectRouteHandlers {
  handler: (request: Request, reply: FastifyReply) => unknown;
  errorHandler: (error: unknown, request: Request, reply: FastifyReply) => void;
}

/**
 * The route's handlers. The handler calls the controller method with its arguments and hands
 * Fastify the method's own result (its promise, as it is), or, once the route has taken over its
 * hooks (direct-lifecycle.ts, at its first request), runs them itself and sends the result: the
 * onRequest work first, the onSend work just before each send, error replies included.
 *
 * As Nest's Fastify adapter: an empty path parameter is not a match (only a wildcard may be empty).
 * A route's parameter names are the same on every request (`fixedNames`): read once, from its
 * first request's params, then each checked by name (a `for…in` over the params object was
 * ~0.3 µs of the queue single get's CPU, docs/performance.md). Not so with an optional parameter
 * (`/a/:x?` is two routes of the router sharing this handler): read on every request then.
 */
function directRoute(
  route: DirectRoute,
  hasParams: boolean,
  fixedNames: boolean,
  takeOver: (request: FastifyRequest) => TakenOver | string,
): DirectRouteHandlers {
  const invoke = route.invoke;
  let names: string[] | undefined;
  // The route context whose hooks this handler runs (the first one it saw; another context sharing
  // the handler keeps its hooks), read from the request under `ownKey`; `tried`: decided.
  let taken: TakenOver | undefined;
  let ownKey: symbol | undefined;
  let ownContext: unknown;
  let tried = false;

  const ours = (request: Request): OwnHooks | undefined =>
    taken !== undefined && (request as unknown as Record<symbol, unknown>)[ownKey!] === ownContext ? taken.own : undefined;

  /**
   * A failure of a request whose hooks this handler runs: its error reply, noted, then sent. After
   * the reply went out there is nothing to answer (as wrap-thenable.js: logged).
   */
  const fail = (error: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): void => {
    if (reply.sent) {
      log.error(`${route.name} failed after its reply was sent: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const body = prepareError(reply, error, request.id);
    hooks.note(request, reply);
    try {
      void reply.send(body);
    } catch (err) {
      handOver(err, reply);
    }
  };

  const emptyParam = (request: Request): boolean => {
    if (!hasParams) {
      return false;
    }
    const params = request.params;
    if (names === undefined || !fixedNames) {
      names = Object.keys(params).filter((name) => name !== '*');
    }
    for (let i = 0; i < names.length; i++) {
      if (params[names[i]] === '') {
        return true;
      }
    }
    return false;
  };

  /**
   * What the method gave, sent, noted just before. A method that sent the reply itself (through a
   * passthrough reply) is noted after the fact. A payload Fastify would serialize is serialized
   * first, so that a failure is an error reply that is noted instead (as Fastify's own send). A send
   * that throws goes to Fastify's error handling (as wrap-thenable.js).
   */
  const send = (payload: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): void => {
    if (reply.sent) {
      hooks.note(request, reply);
      return;
    }
    let body = payload;
    if (serialized(payload, reply)) {
      try {
        body = reply.serialize(payload);
      } catch (err) {
        fail(err, request, reply, hooks);
        return;
      }
    }
    hooks.note(request, reply);
    try {
      void reply.send(body);
    } catch (err) {
      handOver(err, reply);
    }
  };

  const withOwnHooks = (request: Request, reply: FastifyReply, hooks: OwnHooks): unknown => {
    if (emptyParam(request)) {
      reply.callNotFound();
      return undefined;
    }
    if (handlerChannel.hasSubscribers) {
      // Fastify publishes the handler's errors and async end to its tracing channel from what the
      // handler throws or returns: it gets them, the result serialized and noted on its way; errors
      // reach errorHandler.
      const result = invoke(request, reply);
      return isThenable(result) ? result.then((payload) => toSend(payload, request, reply, hooks)) : toSend(result, request, reply, hooks);
    }
    let result: unknown;
    try {
      result = invoke(request, reply);
    } catch (err) {
      fail(err, request, reply, hooks);
      return undefined;
    }
    if (!isThenable(result)) {
      send(result, request, reply, hooks);
      return undefined;
    }
    result.then(
      (payload) => send(payload, request, reply, hooks),
      (err: unknown) => fail(err, request, reply, hooks),
    );
    return undefined;
  };

  return {
    handler(request, reply) {
      const own = ours(request);
      if (own !== undefined) {
        const admitted = own.admit(request, reply);
        if (admitted === true) {
          return withOwnHooks(request, reply, own);
        }
        if (admitted !== false) {
          fail(admitted, request, reply, own);
        }
        return undefined;
      }
      if (!tried) {
        tried = true;
        const result = takeOver(request);
        if (typeof result !== 'string') {
          // This request's onRequest hooks ran already; its onSend work is the handler's now.
          taken = result;
          ownKey = result.contextKey;
          ownContext = result.context;
          return withOwnHooks(request, reply, result.own);
        }
        // Expected for the HEAD twin of a GET route (a route onSend hook of its own).
        const line = `${route.name} (${String(request.method)}) runs its Fastify hooks: ${result}`;
        if (request.method === 'HEAD') {
          log.debug(line);
        } else {
          log.warn(line);
        }
      }
      if (emptyParam(request)) {
        reply.callNotFound();
        return reply;
      }
      return invoke(request, reply);
    },
    errorHandler(error, request, reply) {
      // A request of the taken-over context: an error while sending, or any error of the tracing path.
      const own = ours(request);
      if (own !== undefined) {
        fail(error, request, reply, own);
        return;
      }
      void sendError(reply, error, request.id);
    },
  };
}

/** The tracing path's payload for Fastify: serialized when Fastify would (a failure rejects), then noted. */
function toSend(payload: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): unknown {
  const body = !reply.sent && serialized(payload, reply) ? reply.serialize(payload) : payload;
  hooks.note(request, reply);
  return body;
}

/**
 * Whether Fastify's send would serialize the payload (reply.js, Reply.send): anything but a string,
 * a Buffer or typed array, a stream or web Response, or undefined, when the reply's content type is
 * JSON or not set. The content type is then set as Fastify sets it.
 */
function serialized(payload: unknown, reply: FastifyReply): boolean {
  if (payload === undefined || typeof payload === 'string') {
    return false;
  }
  if (payload !== null && typeof payload === 'object') {
    const o = payload as { pipe?: unknown; getReader?: unknown; buffer?: unknown };
    if (typeof o.pipe === 'function' || typeof o.getReader === 'function' || o.buffer instanceof ArrayBuffer || Object.prototype.toString.call(payload) === '[object Response]') {
      return false;
    }
  }
  const type = reply.getHeader('content-type');
  if (type === undefined) {
    void reply.header('content-type', 'application/json; charset=utf-8');
    return true;
  }
  return String(type).includes('json');
}

/** A send that threw: to Fastify's error handling, whose last handler always answers (never thrown on). */
function handOver(err: unknown, reply: FastifyReply): void {
  try {
    void reply.send(err instanceof Error ? err : new Error(String(err)));
  } catch (again) {
    log.error(`could not send an error reply: ${again instanceof Error ? again.message : String(again)}`);
  }
}

function isThenable(value: unknown): value is Promise<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}
