/** What the route label reads of a Fastify request. */
export interface RoutedRequest {
  readonly routeOptions: { readonly url?: string };
}

/** The label of a request no route matched (404, a malformed URL). */
export const UNMATCHED = 'unmatched';

/**
 * The route pattern of a request (`/api/id/:appId`), as `request.routeOptions.url` gives it, without
 * the 12-field object Fastify 5 builds on every read of `routeOptions` (measured: about a point of
 * the queue single get's CPU, docs/performance.md). Fastify keeps the route's context on the request
 * under its own `Symbol(fastify.context)` — what `request.is404` reads — whose `config.url` is the
 * same pattern. That symbol is private: it is looked for on the first request a route matched and
 * used only when it gives the very value routeOptions gives there; otherwise (a Fastify that moved
 * it) every request is read through routeOptions, as before. Until a matched request came, the
 * same.
 */
export function routeLabels(): (request: RoutedRequest) => string {
  let read: ((request: RoutedRequest) => string) | undefined;
  return (request) => {
    if (read !== undefined) {
      return read(request);
    }
    const url = request.routeOptions.url;
    if (url !== undefined) {
      read = contextReader(request, url) ?? viaRouteOptions;
    }
    return url ?? UNMATCHED;
  };
}

function viaRouteOptions(request: RoutedRequest): string {
  return request.routeOptions.url ?? UNMATCHED;
}

/** A reader of the request's route context, when its `config.url` is `url` on this request; else undefined. */
function contextReader(request: RoutedRequest, url: string): ((request: RoutedRequest) => string) | undefined {
  const key = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context');
  if (key === undefined) {
    return undefined;
  }
  const read = (r: RoutedRequest): string => {
    const context = (r as unknown as Record<symbol, { config?: { url?: unknown } } | undefined>)[key];
    const pattern = context?.config?.url;
    return typeof pattern === 'string' ? pattern : UNMATCHED;
  };
  return read(request) === url ? read : undefined;
}
