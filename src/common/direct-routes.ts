import { Logger, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { sendError } from './error.filter';

/**
 * A hot route whose Nest controller method is called straight from Fastify. The controller stays
 * the one place that defines the route (path, parsing, OpenAPI); only Nest's per-request pipeline
 * (execution context, parameter resolution, the response controller, the exception zone) is
 * skipped — about a third of the CPU time of a queue-ID request (docs/performance.md). The
 * route must therefore have no guards, pipes, interceptors or filters of its own (checked at start),
 * and global ones (`app.useGlobal*`, `APP_*` providers; the app has none but the ErrorFilter) do
 * not apply to it. Errors go through the same `sendError` as the global ErrorFilter, and
 * Fastify hooks (metrics, request id) run as for any route.
 */
export interface DirectRoute<C = unknown> {
  method: 'GET';
  /** The path as Nest registers it with Fastify, e.g. `/api/id/:appId`. */
  url: string;
  controller: Type<C>;
  /** The controller method serving the route, for the enhancer check. */
  handler: keyof C & string;
  /**
   * Calls the controller method with what its decorators would have extracted (`reply` for a
   * method with `@Res({ passthrough: true })`, e.g. to set a header).
   */
  call(controller: C, params: Record<string, string>, query: Record<string, unknown>, reply: DirectReply): unknown;
}

/** What the handler uses of Fastify's request and reply (structural: Nest carries its own Fastify). */
interface DirectRequest {
  /** Fastify's request id (logged with errors, as ErrorFilter does). */
  id?: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
}
export interface DirectReply {
  callNotFound(): void;
  status(code: number): DirectReply;
  header(name: string, value: string): DirectReply;
  send(payload: unknown): DirectReply;
}

const ENHANCERS = [GUARDS_METADATA, PIPES_METADATA, INTERCEPTORS_METADATA, EXCEPTION_FILTERS_METADATA];

/**
 * Swaps the Fastify handler of each route for a direct call of its controller method (Fastify's
 * onRoute hook sees Nest's route registration). Call after NestFactory.create, before init/listen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- routes of different controllers
export function serveDirect(app: NestFastifyApplication, routes: ReadonlyArray<DirectRoute<any>>): void {
  for (const route of routes) {
    const method = (route.controller.prototype as Record<string, unknown>)[route.handler];
    for (const key of ENHANCERS) {
      if (Reflect.getMetadata(key, route.controller) || (method && Reflect.getMetadata(key, method))) {
        throw new Error(`${route.controller.name}.${route.handler} has ${key} metadata: it cannot be served directly`);
      }
    }
  }
  const fastify = app.getHttpAdapter().getInstance();
  const swapped = new Set<DirectRoute>();
  fastify.addHook('onRoute', (options) => {
    const route = routes.find((r) => r.url === options.url && r.method === options.method);
    if (!route) {
      return;
    }
    // Nest's Fastify copy types the handler; the direct handler needs only DirectRequest/DirectReply.
    options.handler = directHandler(route, app.get(route.controller, { strict: false })) as unknown as typeof options.handler;
    swapped.add(route);
  });
  fastify.addHook('onReady', async () => {
    // Not fatal: such a route is either absent or served by Nest as usual, only slower.
    const missing = routes.filter((r) => !swapped.has(r)).map((r) => `${r.method} ${r.url}`);
    if (missing.length > 0) {
      new Logger('DirectRoutes').warn(`not registered by Nest, so not served directly: ${missing.join(', ')}`);
    }
  });
}

function directHandler<C>(route: DirectRoute<C>, controller: C) {
  return async function direct(request: DirectRequest, reply: DirectReply): Promise<unknown> {
    const params = request.params;
    // As Nest's Fastify adapter: an empty path parameter is not a match.
    for (const name in params) {
      if (params[name] === '') {
        reply.callNotFound();
        return reply;
      }
    }
    try {
      return await route.call(controller, params, request.query, reply);
    } catch (err) {
      return sendError(reply, err, request.id);
    }
  };
}
