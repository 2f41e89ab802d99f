import { LoggerService } from '@nestjs/common';
import { LogController } from 'fastify';
import { randomBytes } from 'node:crypto';
import pino, { Logger as PinoLogger } from 'pino';
import { AppConfig } from '../config/app-config';

type Level = AppConfig['log']['level'];

const PINO_LEVEL: Record<Level, pino.Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** One JSON line per entry on stdout: `{level, time, pid, hostname, context, reqId?, msg}`. */
export function createRootLogger(level: Level, destination?: pino.DestinationStream): PinoLogger {
  return pino(
    {
      level: PINO_LEVEL[level],
      base: { pid: process.pid, service: 'shardleaf' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/**
 * Nest's own start-up chatter (one line per module and per route, "Starting Nest application…"):
 * written at debug, so the default level shows only what the service itself says at start.
 */
const NEST_START_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * Where Nest reports an error thrown while the application is created. The entry point reports the
 * failed start itself, in one line (start-service.ts), so this copy, with its stack, goes to debug.
 */
const START_FAILURE_CONTEXT = 'ExceptionHandler';

/**
 * Nest's LoggerService over pino. A message may be an object (e.g. `{msg, reqId}`): its fields
 * become JSON fields. The last string argument is Nest's context (the class name).
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write(NEST_START_CONTEXTS.has(contextOf(rest) ?? '') ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write(contextOf(rest) === START_FAILURE_CONTEXT ? 'debug' : 'error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) {
      return;
    }
    const context = contextOf(rest);
    const stack = level === 'error' && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    const fields: Record<string, unknown> = { context };
    if (stack !== undefined) {
      fields.stack = stack;
    }
    if (message instanceof Error) {
      this.root[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      const { msg, ...more } = message as Record<string, unknown>;
      this.root[level]({ ...fields, ...more }, typeof msg === 'string' ? msg : '');
    } else {
      this.root[level](fields, String(message));
    }
  }
}

/** Nest's context: the last string argument of a log call. */
function contextOf(rest: unknown[]): string | undefined {
  const last = rest[rest.length - 1];
  return typeof last === 'string' ? last : undefined;
}

/**
 * Fastify's per-request logger (`request.log`, bound to the request id), made on first use: the
 * pino child (bindings serialised, level methods set up: ~1.5 µs) is only built when something is
 * logged at an enabled level, which at LOG_LEVEL=log/warn/error is almost never (a queue-ID request
 * costs ~25 µs of CPU in all; docs/performance.md, the hot path section). Same lines as an eager child.
 */
export class LazyRequestLogger {
  private real: PinoLogger | undefined;

  constructor(
    private readonly parent: PinoLogger,
    private readonly bound: pino.Bindings,
  ) {}

  private get logger(): PinoLogger {
    return (this.real ??= this.parent.child(this.bound));
  }

  get level(): string {
    return (this.real ?? this.parent).level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }
  bindings(): pino.Bindings {
    return this.logger.bindings();
  }
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): PinoLogger {
    return this.logger.child(bindings, options);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  private write(level: pino.Level, args: unknown[]): void {
    if (this.real === undefined && !this.parent.isLevelEnabled(level)) {
      return;
    }
    const logger = this.logger;
    Reflect.apply(logger[level], logger, args);
  }
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

/**
 * Fastify's log lines about requests, without its "incoming request" line, which it writes at info
 * through `request.log` on every request, with or without a logger of its own: below debug request
 * loggers start at warn and drop it, after a call, an argument list and a level check per request
 * (docs/performance.md, "the single get's last trims"). Its warnings and errors about a
 * request (a stream error, a failed serializer, a 5xx of its default error handler) stay.
 */
class QuietIncoming extends LogController {
  override incomingRequest(): void {}
}

/**
 * Fastify's own logging on the same pino root: request ids from `x-request-id` (or a new one),
 * and no per-request lines unless LOG_LEVEL is debug or verbose.
 *
 * Below debug Fastify is given no logger of its own: a Fastify with a logger adds a 'finish' and
 * an 'error' listener to every response to log its completion (docs/performance.md, "Fastify's
 * response listeners"), which it does not log at these levels anyway. `request.log` and
 * `reply.log` (Fastify's own warnings and errors about a request, and whatever a route logs) still
 * write through the root at warn and above, with the request's `reqId`, by the child factory.
 * Only `fastify.log` itself is silent then; nothing of this service logs through it.
 */
export function fastifyLogOptions(level: Level, root: PinoLogger) {
  const nextRequestId = requestIds();
  const perRequest = level === 'debug' || level === 'verbose';
  // Fastify logs each request at info: request loggers start at warn unless LOG_LEVEL is debug/verbose.
  const requestRoot = perRequest ? root : root.child({}, { level: 'warn', serializers: REQUEST_SERIALIZERS });
  return {
    ...(perRequest ? { loggerInstance: root } : {}),
    ...(perRequest ? {} : { logController: new QuietIncoming() }),
    // request.log: built on first use (a route with its own logLevel or serializers gets a child now;
    // Fastify passes level '' for a route without one), always from requestRoot (without a logger
    // of its own, Fastify passes its silent one here).
    childLoggerFactory: (_logger: unknown, bindings: pino.Bindings, opts: pino.ChildLoggerOptions): PinoLogger =>
      (opts.level !== undefined && opts.level !== '') || opts.serializers !== undefined
        ? requestRoot.child(bindings, opts)
        : (new LazyRequestLogger(requestRoot, bindings) as unknown as PinoLogger),
    // Logged as `reqId`: the client's x-request-id when it is a plain token, else a new id.
    requestIdHeader: false as const,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
  };
}

/**
 * New request ids of this process: `<12 random hex digits>-<counter in base 36>`, e.g.
 * `3f9c1a7be204-1k2`. The random part (48 bits, drawn once per process) tells processes and
 * restarts apart, the counter requests within one; a string concatenation per request where a
 * random UUID costs a draw from the entropy pool and 36 characters of formatting.
 */
export function requestIds(): () => string {
  const prefix = `${randomBytes(6).toString('hex')}-`;
  let n = 0;
  return () => prefix + (++n).toString(36);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Puts the request's id in its reply's `x-request-id`, to match client and server logs. Called by
 * the app's first check (common/shutdown-gate.ts, common/app-hooks.ts), so every reply has it.
 */
export function echoRequestId(request: { id: string }, reply: { header(k: string, v: string): unknown }): void {
  reply.header('x-request-id', request.id);
}
