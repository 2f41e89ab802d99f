import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { isBackendFailure } from './backend-failure';
import { errorSpec } from './error-catalog';
import { logBackendFailure, logInternalError } from './error-log';
import { ErrorKind, IdGenError } from './id-gen.error';

export interface ErrorBody {
  code: number;
  error: string;
  message: string;
}

/** Maps any error to its status and `{code, error, message}` body. Used by Nest and by Fastify. */
export function toErrorResponse(exception: unknown, reqId?: string): { status: number; body: ErrorBody } {
  const idGenError = toIdGenError(exception, reqId);
  const spec = errorSpec(idGenError.kind);
  return { status: spec.status, body: { code: spec.code, error: idGenError.kind, message: idGenError.message } };
}

function toIdGenError(exception: unknown, reqId: string | undefined): IdGenError {
  if (exception instanceof IdGenError) {
    if (exception.kind === ErrorKind.BackendUnavailable && Object.hasOwn(exception, 'cause')) {
      // A service that mapped a backend's error itself: logged here, where the request id is known.
      logBackendFailure(exception.cause, reqId);
    }
    return exception;
  }
  const status = httpStatusOf(exception);
  if (status !== undefined) {
    const message = exception instanceof Error ? exception.message : 'request refused';
    switch (status) {
      case 404:
        return new IdGenError(ErrorKind.RouteNotFound, message);
      case 405:
        return new IdGenError(ErrorKind.MethodNotAllowed, message);
      case 413:
        return new IdGenError(ErrorKind.PayloadTooLarge, message);
      case 415:
        return new IdGenError(ErrorKind.UnsupportedMediaType, message);
      case 401:
        return new IdGenError(ErrorKind.Unauthorized, message);
      default:
        if (status >= 400 && status < 500) {
          return new IdGenError(ErrorKind.BadInput, message);
        }
    }
  }
  if (isBackendFailure(exception)) {
    // Once per text per 10 s, the repeats counted (error-log.ts).
    logBackendFailure(exception, reqId);
    return new IdGenError(ErrorKind.BackendUnavailable, 'a backend (Redis, MySQL or ZooKeeper) is unavailable; retry later');
  }
  logInternalError(exception, reqId);
  return new IdGenError(ErrorKind.Internal, 'internal error');
}

/** Status of a Nest HttpException or a Fastify error (`statusCode`). */
function httpStatusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) {
    return exception.getStatus();
  }
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/** What sendError uses of a Fastify reply (structural: the direct routes type their own). */
export interface ErrorReply {
  status(code: number): ErrorReply;
  header(name: string, value: string): ErrorReply;
  send(payload: unknown): ErrorReply;
}

/**
 * Where sendError records the error kind on the reply, for the HTTP metrics (errorKindOf). Set on
 * error replies only; a property, not a WeakMap entry (measured: ~250 ns per error reply for the
 * WeakMap, next to nothing for the property, docs/decisions/0013).
 */
const ERROR_KIND = Symbol('shardleaf.errorKind');

/**
 * Sends `exception` as its JSON `{code, error, message}` reply and records its kind for the
 * metrics. Every error reply of the service goes through here (the filter, the direct routes,
 * Fastify's router errors, the shutdown gate).
 */
export function sendError<R extends ErrorReply>(reply: R, exception: unknown, reqId?: string): R {
  return reply.send(prepareError(reply, exception, reqId)) as R;
}

/**
 * sendError up to the send: the reply's status, content type and recorded kind set, its body
 * returned (a direct route notes the reply between the two: direct-routes/direct-lifecycle.ts).
 */
export function prepareError(reply: ErrorReply, exception: unknown, reqId?: string): ErrorBody {
  const { status, body } = toErrorResponse(exception, reqId);
  (reply as unknown as Record<symbol, string>)[ERROR_KIND] = body.error;
  reply.status(status).header('content-type', 'application/json; charset=utf-8');
  return body;
}

/** The kind sendError recorded for this reply; undefined for a reply it did not send. */
export function errorKindOf(reply: object): string | undefined {
  return (reply as Record<symbol, string | undefined>)[ERROR_KIND];
}

/** The one exception filter: every error leaves as JSON `{code, error, message}`. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    void sendError(http.getResponse<FastifyReply>(), exception, http.getRequest<{ id?: string }>().id);
  }
}
