import { LoggerService } from '@nestjs/common';
import { randomInt } from 'node:crypto';
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


/** The first counter value that would need a sixth base-36 digit: a new prefix is drawn instead. */
const COUNTER_LIMIT = 36 ** 5;

/**
 * New request ids of this process: `<6 random base-36 digits>-<counter in base 36>`, e.g.
 * `k3x9q0-1k2`, at most 12 characters. The random part (31 bits) tells processes and restarts
 * apart, the counter requests within one; when the counter would need a sixth digit (60,466,175
 * ids) a new prefix is drawn and it starts again at 1.
 *
 * Why 12: V8 copies a concatenation shorter than 13 characters into a flat string, and makes a
 * longer one a rope (a cons string) that each reader must first flatten through the runtime. Every
 * reply carries the id in `x-request-id`, whose value Node checks with a regular expression: on a
 * rope that check cost 0.1–0.2 µs more per id in a microbenchmark, ~0.37 µs per request profiled
 * (docs/performance.md, "The request id as a flat string").
 */
export function requestIds(): () => string {
  let prefix = `${randomPrefix()}-`;
  let n = 0;
  return () => {
    if (++n === COUNTER_LIMIT) {
      prefix = `${randomPrefix()}-`;
      n = 1;
    }
    return prefix + n.toString(36);
  };
}

/** Six base-36 digits, leading zeros kept. */
function randomPrefix(): string {
  return randomInt(36 ** 6).toString(36).padStart(6, '0');
}

/** A request id a client may give in `x-request-id` (else the service makes one). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Puts the request's id in its reply's `x-request-id`, to match client and server logs. Called by
 * the app's first check (common/shutdown-gate.ts, common/app-hooks.ts), so every reply has it.
 */
export function echoRequestId(request: { id: string }, reply: { header(k: string, v: string): unknown }): void {
  reply.header('x-request-id', request.id);
}
