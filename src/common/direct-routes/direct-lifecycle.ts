import { VersioningType } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppHooks } from '../app-hooks';

/** What a direct route runs in place of its Fastify hooks, once it has taken them over. */
export interface OwnHooks {
  /**
   * The onRequest work: true when the request goes on to the method; false when it was answered
   * (sent to the not-found handler: a target Nest's adapter does not route); an error when an app
   * check refused it (the caller sends it, as an error reply of the route).
   */
  admit(request: FastifyRequest, reply: FastifyReply): boolean | Error;
  /**
   * The onSend work, to run just before each reply of the route is sent (error replies too): not
   * for a reply marked noted (`markNoted`, app-hooks.ts); the reply is not marked.
   */
  note(request: FastifyRequest, reply: FastifyReply): void;
}

/** A route whose hooks were taken over: its context (the request's value under `contextKey`) and what to run. */
export interface TakenOver {
  own: OwnHooks;
  contextKey: symbol;
  context: object;
}

/** The parts of Nest's FastifyAdapter its own onRequest hooks read (not public API). */
export interface NestAdapterState {
  onRequestHook?: unknown;
  corsHook?: unknown;
  versioningOptions?: { type?: unknown };
  isRoutableRequestTarget?(url: string): boolean;
}

type Hook = (...args: never[]) => unknown;

/** A Fastify route context, as Fastify keeps it on the request (lib/context.js; not public API). */
interface RouteContext {
  config: unknown;
  handler: unknown;
  server: object;
  onRequest: Hook[] | null;
  onSend: Hook[] | null;
  preParsing: Hook[] | null;
  preValidation: Hook[] | null;
  preHandler: Hook[] | null;
  preSerialization: Hook[] | null;
  onError: Hook[] | null;
}

/**
 * Takes over the onRequest and onSend hooks of the route `request` matched, when every one of them
 * is known: then the route's context has none left, and the direct handler runs `OwnHooks` itself.
 * Returns why not otherwise (the route keeps Fastify's hooks, as any route).
 *
 * Why: Fastify runs each hook list through a runner (three closures per list per request) that
 * calls every hook through one shared call site, and a queue-ID request had six onRequest hooks:
 * four of Nest's FastifyAdapter and @fastify/middie's, which do nothing in this service, and the
 * app's one (AppHooks), plus the app's onSend hook. Measured, the runners and the calls cost the queue single get about 6 % of
 * its requests per second (docs/decisions/0039-direct-routes-run-their-hooks.md).
 *
 * What is known, and when each does nothing (checked here, on the route's first request, when the
 * app has been set up for good):
 * - the app's two hooks (AppHooks): run as its `check` and `note`;
 * - Nest's forwarding hook of `setOnRequestHook`: while none was set (Nest sets none);
 * - Nest's CORS hook: while `enableCors` was not called;
 * - Nest's hook for errors of a custom version extractor: while versioning is not CUSTOM;
 * - Nest's hook that sends a request target it does not route (`*users`, which find-my-way serves
 *   as `/users`) to the not-found handler: kept, as the same test on every request (a character
 *   compare for the usual `/…` target).
 * Anything else (another plugin's hook, a route's own hooks, a preParsing/preValidation/preHandler
 * hook that the onRequest work would then run after, an onError hook that the handler's own error
 * replies would skip, `@fastify/middie`, which this app does not register: bootstrap.ts's
 * `skipMiddie`) leaves the route as it is.
 *
 * The route's context is Fastify's private `Symbol(fastify.context)` on the request and the
 * instance's hook lists its `Symbol(fastify.hooks)`; both are checked against what the public
 * `request.routeOptions` gives, and a Fastify that moved them leaves the route as it is.
 */
export function takeOverHooks(request: FastifyRequest, adapter: NestAdapterState, hooks: AppHooks): TakenOver | string {
  const found = routeContextOf(request);
  if (typeof found === 'string') {
    return found;
  }
  const { context, contextKey } = found;
  for (const list of ['preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onError'] as const) {
    if (context[list] !== null) {
      return `it has ${list} hooks, which Fastify runs between the hooks and the reply`;
    }
  }
  const lists = symbolValue(context.server, 'fastify.hooks') as { onRequest?: unknown; onSend?: unknown } | undefined;
  if (!Array.isArray(lists?.onRequest) || !Array.isArray(lists.onSend)) {
    return "its instance's hook lists (Symbol(fastify.hooks)) are not where this Fastify version was seen to keep them";
  }
  const onRequest = lists.onRequest as Hook[];
  const onSend = lists.onSend as Hook[];
  // The context holds the instance's hooks (bound) and then the route's own: none of its own here.
  if ((context.onRequest?.length ?? 0) !== onRequest.length || (context.onSend?.length ?? 0) !== onSend.length) {
    return 'it has hooks of its own';
  }
  if (onSend.length !== 1 || onSend[0] !== (hooks.onSendHook as unknown)) {
    return `its onSend hooks are not the app's one (${onSend.length} hooks)`;
  }
  let routable: ((url: string) => boolean) | undefined;
  for (let i = 0; i < onRequest.length; i++) {
    const hook = onRequest[i];
    if (hook === (hooks.onRequestHook as unknown)) {
      if (i !== onRequest.length - 1) {
        return "the app's onRequest hook is not the last one";
      }
      continue;
    }
    const verdict = nestHook(hook, adapter);
    if (typeof verdict === 'string') {
      return verdict;
    }
    routable ??= verdict.routable;
  }
  if (onRequest[onRequest.length - 1] !== (hooks.onRequestHook as unknown)) {
    return "the app's onRequest hook is not among the route's";
  }
  context.onRequest = null;
  context.onSend = null;
  return { own: ownHooks(hooks, routable), contextKey, context };
}

/** What one of Nest's onRequest hooks needs of a direct route: nothing, or the routable-target test. */
function nestHook(hook: Hook, adapter: NestAdapterState): { routable?: (url: string) => boolean } | string {
  const source = Function.prototype.toString.call(hook);
  if (source.includes('this.onRequestHook')) {
    return adapter.onRequestHook ? 'a hook was given to the adapter’s setOnRequestHook' : {};
  }
  if (source.includes('this.corsHook')) {
    return adapter.corsHook ? 'CORS is enabled (enableCors)' : {};
  }
  if (source.includes('this.versionExtractorErrors')) {
    return adapter.versioningOptions?.type === VersioningType.CUSTOM ? 'versioning is CUSTOM (its extractor errors come through a hook)' : {};
  }
  if (source.includes('this.isRoutableRequestTarget') && typeof adapter.isRoutableRequestTarget === 'function') {
    const isRoutable = adapter.isRoutableRequestTarget.bind(adapter);
    return { routable: isRoutable };
  }
  return `an onRequest hook it does not know: ${source.slice(0, 80).replace(/\s+/g, ' ')}`;
}

function ownHooks(hooks: AppHooks, routable: ((url: string) => boolean) | undefined): OwnHooks {
  return {
    admit(request, reply) {
      if (routable !== undefined) {
        const url = request.raw.url ?? '';
        // As Nest's hook: a target in origin-form ("/…") is routable; any other is asked.
        if (url.charCodeAt(0) !== 47 && !routable(url)) {
          reply.callNotFound();
          return false;
        }
      }
      return hooks.check(request, reply) ?? true;
    },
    note(request, reply) {
      hooks.noteUnmarked(request, reply);
    },
  };
}

/** The route context of the request, checked against routeOptions; else why it cannot be read. */
function routeContextOf(request: FastifyRequest): { context: RouteContext; contextKey: symbol } | string {
  const contextKey = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context');
  const context = contextKey === undefined ? undefined : ((request as unknown as Record<symbol, unknown>)[contextKey] as RouteContext | undefined);
  const options = request.routeOptions as { config?: unknown; handler?: unknown };
  if (contextKey === undefined || typeof context !== 'object' || context === null || context.config !== options.config || context.handler !== options.handler) {
    return "the request's route context (Symbol(fastify.context)) is not where this Fastify version was seen to keep it";
  }
  if (typeof context.server !== 'object' || context.server === null) {
    return 'its route context has no instance';
  }
  return { context, contextKey };
}

function symbolValue(target: object, description: string): unknown {
  const key = Object.getOwnPropertySymbols(target).find((s) => s.description === description);
  return key === undefined ? undefined : (target as Record<symbol, unknown>)[key];
}
