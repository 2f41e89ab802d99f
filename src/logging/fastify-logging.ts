import { FastifyReply, FastifyRequest, LogController } from 'fastify';
import pino, { Logger as PinoLogger } from 'pino';
import { AppConfig } from '../config/app-config';
import { LazyRequestLogger } from './lazy-request-logger';
import { REQUEST_ID, requestIds } from './pino-logger';

type Level = AppConfig['log']['level'];

/** Fastify's factory of `request.log` (its `childLoggerFactory`; structural: Nest carries its own Fastify). */
export type ChildLoggerFactory = (logger: unknown, bindings: pino.Bindings, opts: pino.ChildLoggerOptions, rawReq?: unknown) => unknown;

/** What the logging uses of a Fastify instance. */
export interface LoggingHost {
  readonly log: unknown;
  readonly childLoggerFactory: ChildLoggerFactory;
  setChildLoggerFactory(factory: ChildLoggerFactory): unknown;
}

/** A request or reply as far as its logger goes. */
interface Logged {
  log: unknown;
}

/**
 * How Fastify's own logger writes the request and reply it logs with (`{req, res, err}`), for the
 * request loggers made without it: a summary, not the objects.
 */
const REQUEST_SERIALIZERS: Record<string, pino.SerializerFn> = {
  req: (req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
    method: req.method,
    url: req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
  res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
};

const INSTALLED = Symbol('shardleaf.fastifyLogging');

/**
 * Fastify's own logging on the same pino root: request ids from `x-request-id` (or a new one),
 * and no per-request lines unless LOG_LEVEL is debug or verbose.
 *
 * - `options`: for Fastify (or Nest's FastifyAdapter). Below debug Fastify is given no logger of
 *   its own: a Fastify with a logger adds a 'finish' and an 'error' listener to every response to
 *   log its completion (docs/performance.md, "Fastify's response listeners"), which it does not
 *   log at these levels anyway. Only `fastify.log` itself is silent then; nothing of this service
 *   logs through it.
 * - `install(fastify)`, before any route: `request.log` and `reply.log` (Fastify's own warnings
 *   and errors about a request, and whatever a route logs) write through the root at warn and
 *   above, with the request's `reqId`, made on first use (LazyRequestLogger).
 * - `withoutRequestLogger`: for a route whose handler hands `request.log` to nobody (the direct
 *   ID routes): Fastify's own factory, with which it makes nothing per request below debug (the
 *   request's log is its silent logger; ~1 µs of a queue-ID request's ~30, docs/performance.md).
 *   Fastify's lines about such a request still reach the log: its log controller (AppLogController)
 *   and the route's error paths call `ensure` first, which gives the request its lazy logger.
 */
export class FastifyLogging {
  readonly options: {
    loggerInstance?: PinoLogger;
    logController: LogController;
    requestIdHeader: false;
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => string;
  };
  private readonly requestRoot: PinoLogger;
  private installed: { fastifyDefault: ChildLoggerFactory | undefined; silent: unknown } | undefined;

  constructor(level: Level, root: PinoLogger) {
    const nextRequestId = requestIds();
    const perRequest = level === 'debug' || level === 'verbose';
    // Fastify logs each request at info: request loggers start at warn unless LOG_LEVEL is debug/verbose.
    this.requestRoot = root.child({}, perRequest ? { serializers: REQUEST_SERIALIZERS } : { level: 'warn', serializers: REQUEST_SERIALIZERS });
    this.options = {
      ...(perRequest ? { loggerInstance: root } : {}),
      logController: new AppLogController(this, !perRequest),
      // Logged as `reqId`: the client's x-request-id when it is a plain token, else a new id.
      requestIdHeader: false,
      genReqId: (req) => {
        const given = req.headers['x-request-id'];
        return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
      },
    };
  }

  /**
   * request.log: built on first use (a route with its own logLevel or serializers gets a child now;
   * Fastify passes level '' for a route without one), always from requestRoot (without a logger of
   * its own, Fastify passes its silent one as `logger`).
   */
  readonly childLoggerFactory: ChildLoggerFactory = (_logger, bindings, opts) =>
    (opts.level !== undefined && opts.level !== '') || opts.serializers !== undefined
      ? this.requestRoot.child(bindings, opts)
      : new LazyRequestLogger(this.requestRoot, bindings);

  /**
   * Sets the request loggers of a Fastify instance: call once, before any route is added. The
   * contexts Fastify makes in its constructor (its router errors', `frameworkErrors`) keep its
   * factory: their handlers call `ensure`.
   */
  install(fastify: LoggingHost): void {
    if (this.installed !== undefined) {
      throw new Error('FastifyLogging.install: already installed');
    }
    // Only Fastify's own factory lets it skip the logger (route.js): any other, and routes keep ours.
    const current = fastify.childLoggerFactory;
    this.installed = { fastifyDefault: current.name === 'defaultChildLoggerFactory' ? current : undefined, silent: fastify.log };
    fastify.setChildLoggerFactory(this.childLoggerFactory);
    (fastify as unknown as Record<symbol, unknown>)[INSTALLED] = this;
  }

  /** The route option `childLoggerFactory` of a route whose handler hands `request.log` to nobody (see the class). */
  get withoutRequestLogger(): ChildLoggerFactory | undefined {
    return this.installed?.fastifyDefault;
  }

  /** Gives a request that Fastify made no logger for its lazy one, before anything logs about it. */
  ensure(request: Logged & { id: string }, reply: Logged): void {
    if (this.installed === undefined || request.log !== this.installed.silent) {
      return;
    }
    this.make(request, reply);
  }

  /** `ensure`, when a line at `level` would be written (Fastify's info lines below debug are not). */
  ensureAt(level: pino.Level, request: Logged & { id: string }, reply: Logged): void {
    if (this.requestRoot.isLevelEnabled(level)) {
      this.ensure(request, reply);
    }
  }

  private make(request: Logged & { id: string }, reply: Logged): void {
    const log = this.childLoggerFactory(undefined, { [this.options.logController.requestIdLogLabel]: request.id }, {});
    request.log = log;
    reply.log = log;
  }
}

/** The FastifyLogging installed on this Fastify instance, if any. */
export function fastifyLoggingOf(fastify: object): FastifyLogging | undefined {
  return (fastify as Record<symbol, FastifyLogging | undefined>)[INSTALLED];
}

/**
 * Fastify's log lines about requests. Without its "incoming request" line below debug, which it
 * writes at info through `request.log` on every request: request loggers start at warn there and
 * drop it, after a call, an argument list and a level check per request (docs/performance.md, "the
 * single get's last trims"). Its warnings and errors about a request (a stream error, a failed
 * serializer, a 5xx of its default error handler) stay, through the request's logger, made first
 * for a request of a route without one (FastifyLogging.ensure).
 */
class AppLogController extends LogController {
  constructor(
    private readonly logging: FastifyLogging,
    private readonly quietIncoming: boolean,
  ) {
    super();
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!this.quietIncoming) {
      super.incomingRequest(request, reply, metadata);
    }
  }
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.logging.ensureAt(error ? 'error' : 'info', request, reply);
    super.requestCompleted(error, request, reply, metadata);
  }
  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.logging.ensureAt(reply.statusCode >= 500 ? 'error' : 'info', request, reply);
    super.defaultErrorLog(error, request, reply, metadata);
  }
  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.logging.ensureAt((error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE' ? 'info' : 'warn', request, reply);
    super.streamError(error, request, reply, metadata);
  }
  override routeNotFound(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.logging.ensureAt('info', request, reply);
    super.routeNotFound(request, reply, metadata);
  }
  override writeHeadError(error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.logging.ensureAt('warn', request, reply);
    super.writeHeadError(error, request, reply, metadata);
  }
  override serializerError(error: Error, request: FastifyRequest, reply: FastifyReply, metadata: { statusCode: number }): void {
    this.logging.ensureAt('error', request, reply);
    super.serializerError(error, request, reply, metadata);
  }
}
