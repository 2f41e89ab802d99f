import { Logger } from '@nestjs/common';
import { tracingChannel } from 'node:diagnostics_channel';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { markNoted } from '../app-hooks';
import { prepareError, sendError } from '../error.filter';
import { DirectInvoker } from './direct-route-args';
import { OwnHooks, TakenOver } from './direct-lifecycle';

/** A method marked `@DirectRoute()`, resolved at start: its name (for messages) and its per-request call. */
export interface DirectRoute {
  /** `Controller.method`, for messages. */
  name: string;
  invoke: DirectInvoker;
  /** Fastify makes a `request.log` per request (`DirectRouteOptions.requestLogger`). */
  requestLogger: boolean;
}

/** Fastify's channel of route handlers (handle-request.js, wrap-thenable.js): watched by APM tools. */
const handlerChannel = tracingChannel('fastify.request.handler');

const log = new Logger('DirectRoutes');

/** A request of a direct route: path parameters and query values as strings (what the readers take). */
type Request = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown> }>;

/** A direct route's handler and error handler. */
export interface DirectRouteHandlers {
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
 *
 * `ensureLogger` gives a request its `request.log` when the route was registered without a request
 * logger (logging/fastify-logging.ts, `withoutRequestLogger`): before anything hands the request to
 * Fastify's own machinery, which may log through it (its path when hooks were not taken over, the
 * tracing path, a failed send, its error handling).
 */
export function directRoute(
  route: DirectRoute,
  hasParams: boolean,
  fixedNames: boolean,
  takeOver: (request: FastifyRequest) => TakenOver | string,
  ensureLogger: (request: FastifyRequest, reply: FastifyReply) => void,
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

  /** The reply's notes, then its send; a send that throws goes to Fastify's error handling (as wrap-thenable.js). */
  const noteAndSend = (body: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): void => {
    hooks.note(request, reply);
    try {
      void reply.send(body);
    } catch (err) {
      ensureLogger(request, reply);
      handOver(err, reply);
    }
  };

  /**
   * A failure of a request whose hooks this handler runs: its error reply, noted, then sent. After
   * the reply went out there is nothing to answer (as wrap-thenable.js: logged).
   */
  const fail = (error: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): void => {
    if (reply.sent) {
      log.error(`${route.name} failed after its reply was sent: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    noteAndSend(prepareError(reply, error, request.id), request, reply, hooks);
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
   * first, so that a failure is an error reply that is noted instead (as Fastify's own send).
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
    noteAndSend(body, request, reply, hooks);
  };

  const withOwnHooks = (request: Request, reply: FastifyReply, hooks: OwnHooks): unknown => {
    if (emptyParam(request)) {
      reply.callNotFound();
      return undefined;
    }
    if (handlerChannel.hasSubscribers) {
      ensureLogger(request, reply);
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
      // Fastify's path: whatever it logs about the request goes through request.log.
      ensureLogger(request, reply);
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
      ensureLogger(request, reply);
      void sendError(reply, error, request.id);
    },
  };
}

/** The tracing path's payload for Fastify: serialized when Fastify would (a failure rejects), then noted. */
function toSend(payload: unknown, request: Request, reply: FastifyReply, hooks: OwnHooks): unknown {
  const body = !reply.sent && serialized(payload, reply) ? reply.serialize(payload) : payload;
  hooks.note(request, reply);
  // Fastify sends it: the error reply of a send that fails is not noted again.
  markNoted(reply);
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

/** A send that threw (its reply noted): to Fastify's error handling, whose last handler always answers (never thrown on). */
function handOver(err: unknown, reply: FastifyReply): void {
  // Noted already: the error reply that follows is not noted again.
  markNoted(reply);
  try {
    void reply.send(err instanceof Error ? err : new Error(String(err)));
  } catch (again) {
    log.error(`could not send an error reply: ${again instanceof Error ? again.message : String(again)}`);
  }
}

function isThenable(value: unknown): value is Promise<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}
