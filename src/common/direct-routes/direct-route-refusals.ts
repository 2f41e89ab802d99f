import { RequestMethod } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HOST_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants';
import { ApplicationConfig } from '@nestjs/core';
import { ErrorFilter } from '../error.filter';

/** Enhancers Nest's pipeline applies and a direct call would skip, by the decorator that sets them. */
const ENHANCERS: ReadonlyArray<[key: string, what: string]> = [
  [GUARDS_METADATA, 'guards (@UseGuards)'],
  [PIPES_METADATA, 'pipes (@UsePipes)'],
  [INTERCEPTORS_METADATA, 'interceptors (@UseInterceptors)'],
  [EXCEPTION_FILTERS_METADATA, 'exception filters (@UseFilters)'],
];

/** What Nest's response handling does for a method and a direct call would not. */
const RESPONSE_METADATA: ReadonlyArray<[key: string, what: string]> = [
  [HTTP_CODE_METADATA, '@HttpCode()'],
  [HEADERS_METADATA, '@Header()'],
  [REDIRECT_METADATA, '@Redirect()'],
  [RENDER_METADATA, '@Render()'],
  [SSE_METADATA, '@Sse()'],
];

/**
 * Why Nest's handling of `controller.handler` differs from a direct call, for what is declared
 * on the controller and the method (the arguments are checked by argReaders).
 */
export function routeRefusals(controller: object, method: object): string[] {
  const refusals: string[] = [];
  const requestMethod = Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod | undefined;
  if (Reflect.getMetadata(PATH_METADATA, method) === undefined || requestMethod === undefined) {
    refusals.push('it is not a route (no @Get())');
  } else if (requestMethod !== RequestMethod.GET) {
    // Nest answers a POST with 201 and reads a body; a direct call does neither.
    refusals.push(`only GET routes are served directly, not ${RequestMethod[requestMethod]}`);
  }
  for (const [key, what] of ENHANCERS) {
    if (isSet(Reflect.getMetadata(key, controller))) {
      refusals.push(`its controller has ${what}`);
    }
    if (isSet(Reflect.getMetadata(key, method))) {
      refusals.push(`it has ${what}`);
    }
  }
  for (const [key, what] of RESPONSE_METADATA) {
    if (isSet(Reflect.getMetadata(key, method))) {
      refusals.push(`it has ${what}, which Nest's response handling applies`);
    }
  }
  if (isSet(Reflect.getMetadata(HOST_METADATA, controller))) {
    refusals.push('its controller is bound to a host (@Controller({ host }))');
  }
  return refusals;
}

/**
 * App-wide enhancers, which Nest applies to every route and a direct call would skip:
 * `app.useGlobalGuards/Pipes/Interceptors/Filters` and the `APP_GUARD`, `APP_PIPE`,
 * `APP_INTERCEPTOR`, `APP_FILTER` providers (request-scoped ones included). The one global filter
 * allowed is the ErrorFilter: a direct route maps errors through the same `sendError`.
 */
export function appWideRefusals(config: ApplicationConfig): string[] {
  const refusals: string[] = [];
  const count = (what: string, static_: unknown[], requestScoped: unknown[]) => {
    const n = static_.length + requestScoped.length;
    if (n > 0) {
      refusals.push(`the app has ${n} app-wide ${what}`);
    }
  };
  count('guard(s) (useGlobalGuards or APP_GUARD)', config.getGlobalGuards(), config.getGlobalRequestGuards());
  count('pipe(s) (useGlobalPipes or APP_PIPE)', config.getGlobalPipes(), config.getGlobalRequestPipes());
  count(
    'interceptor(s) (useGlobalInterceptors or APP_INTERCEPTOR)',
    config.getGlobalInterceptors(),
    config.getGlobalRequestInterceptors(),
  );
  count(
    'exception filter(s) other than ErrorFilter (useGlobalFilters or APP_FILTER)',
    config.getGlobalFilters().filter((filter) => !(filter instanceof ErrorFilter)),
    config.getGlobalRequestFilters(),
  );
  return refusals;
}

/** Nest leaves empty arrays behind `@UseGuards()` with no argument; those apply nothing. */
function isSet(value: unknown): boolean {
  return value !== undefined && !(Array.isArray(value) && value.length === 0);
}
