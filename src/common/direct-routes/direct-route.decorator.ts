import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/** Set on a controller method marked `@DirectRoute()` (its options); `serveDirect` finds the routes by it. */
export const DIRECT_ROUTE_METADATA = 'shardleaf:direct-route';

/**
 * The key, in the Fastify route config Nest passes on (`@RouteConfig`'s channel), under which the
 * marked method itself travels to Fastify's `onRoute` hook: that is how `serveDirect` tells which
 * Fastify route serves which controller method, whatever prefix or path Nest gave it.
 */
export const DIRECT_ROUTE_CONFIG_KEY = Symbol('shardleaf:direct-route');

/** How a direct route is served. */
export interface DirectRouteOptions {
  /**
   * Whether Fastify makes a `request.log` for each request. By default only when the method is
   * given the request or the reply (`@Req()`, `@Res()`), which it may log through. `false`: never,
   * for a method that logs with Nest's Logger (below LOG_LEVEL=debug `request.log`/`reply.log` are
   * then Fastify's silent logger in the method). Fastify's own lines about a request still get one
   * (logging/fastify-logging.ts), except the warnings it writes straight to `reply.log` while a
   * method writes the reply itself (a second send, a stream that breaks): not for such a method.
   * About 1 µs of a queue-ID request (docs/performance.md).
   */
  requestLogger?: boolean;
}

/**
 * Serves this GET route by calling the controller method straight from Fastify, without Nest's
 * per-request pipeline (`serveDirect`, docs/performance.md). The method's own decorators stay the
 * one definition of the route: `@Get`, `@Param`, `@Query`, `@Headers`, `@Req`,
 * `@Res({ passthrough: true })` are read from Nest's metadata once, at start. Anything the direct
 * call would skip (guards, pipes — parameter pipes too —, interceptors, filters, app-wide ones,
 * `@HttpCode`, `@Header`, other argument kinds, a request-scoped controller) is refused at start.
 */
export function DirectRoute(options: DirectRouteOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    Reflect.defineMetadata(DIRECT_ROUTE_METADATA, { ...options }, method);
    // Merged into a config set by a @RouteConfig() applied before (below) this decorator; one
    // applied after it replaces the config, which serveDirect reports at start.
    const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method) as object | undefined) ?? {};
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, [DIRECT_ROUTE_CONFIG_KEY]: method }, method);
  };
}
