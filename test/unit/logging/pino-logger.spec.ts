import Fastify from 'fastify';
import { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { PinoNestLogger, createRootLogger, echoRequestId, requestIds } from '../../../src/logging/pino-logger';
import { FastifyLogging, LoggingHost, fastifyLoggingOf } from '../../../src/logging/fastify-logging';
import { LazyRequestLogger } from '../../../src/logging/lazy-request-logger';

/** A Fastify with the service's logging, as bootstrap.ts wires it. */
function fastifyWith(level: 'log' | 'debug', root: ReturnType<typeof createRootLogger>) {
  const logging = new FastifyLogging(level, root);
  const app = Fastify(logging.options);
  logging.install(app as unknown as LoggingHost);
  return app;
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, stream: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } };
}

async function appAt(level: 'log' | 'debug') {
  const { lines, stream } = capture();
  const root = createRootLogger(level, stream);
  const app = fastifyWith(level, root);
  app.addHook('onRequest', (request, reply, done) => {
    echoRequestId(request, reply);
    done();
  });
  app.get('/x', async () => 'ok');
  await app.ready();
  return { app, lines };
}

describe('structured logs', () => {
  it('writes Nest log calls as JSON lines with level, context and extra fields', () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('log', stream));
    logger.log('ready', 'Boot');
    logger.warn({ msg: 'backend failure: x', reqId: 'r-1' }, 'ErrorFilter');
    logger.debug('hidden at the default level', 'Boot');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'ready', context: 'Boot', service: 'shardleaf' });
    expect(lines[1]).toMatchObject({ level: 'warn', msg: 'backend failure: x', reqId: 'r-1', context: 'ErrorFilter' });
    expect(typeof lines[0].time).toBe('number');
  });

  it('logs nothing per request at the default level, and echoes the request id', async () => {
    const { app, lines } = await appAt('log');
    const res = await app.inject({ url: '/x', headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers['x-request-id']).toBe('abc-123');
    const fresh = await app.inject({ url: '/x', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(String(fresh.headers['x-request-id'])).toMatch(/^[0-9a-z]{6}-[0-9a-z]{1,5}$/);
    const next = await app.inject({ url: '/x' });
    expect(next.headers['x-request-id']).not.toBe(fresh.headers['x-request-id']);
    expect(lines).toEqual([]);
    await app.close();
  });

  it('writes what a route logs through request.log with its reqId, and nothing below the level', async () => {
    const { lines, stream } = capture();
    const app = fastifyWith('log', createRootLogger('log', stream));
    app.get('/warns', async (request) => {
      request.log.info('hidden: Fastify logs at warn unless LOG_LEVEL is debug');
      request.log.warn({ shard: 7 }, 'list low');
      request.log.child({ part: 'inner' }).error('inner failure');
      return 'ok';
    });
    await app.ready();
    await app.inject({ url: '/warns', headers: { 'x-request-id': 'req-7' } });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: 'list low', shard: 7, reqId: 'req-7', service: 'shardleaf' });
    expect(lines[1]).toMatchObject({ level: 'error', msg: 'inner failure', part: 'inner', reqId: 'req-7' });
    await app.close();
  });

  it('builds no pino child for a request that logs nothing (request.log is made on first use)', async () => {
    const { lines, stream } = capture();
    const app = fastifyWith('log', createRootLogger('log', stream));
    let log: unknown;
    app.get('/quiet', async (request) => {
      log = request.log;
      return 'ok';
    });
    await app.ready();
    await app.inject({ url: '/quiet' });
    expect(log).toBeInstanceOf(LazyRequestLogger);
    expect(lines).toEqual([]);
    await app.close();
  });

  it('gives a route with its own logLevel a logger at that level', async () => {
    const { lines, stream } = capture();
    const app = fastifyWith('log', createRootLogger('log', stream));
    app.get('/chatty', { logLevel: 'info' }, async (request) => {
      request.log.info('shown at the route level');
      return 'ok';
    });
    await app.ready();
    await app.inject({ url: '/chatty', headers: { 'x-request-id': 'req-8' } });
    expect(lines.filter((l) => l.msg === 'shown at the route level' && l.reqId === 'req-8')).toHaveLength(1);
    await app.close();
  });

  it('logs each request with its reqId at debug', async () => {
    const { app, lines } = await appAt('debug');
    await app.inject({ url: '/x', headers: { 'x-request-id': 'req-42' } });
    expect(lines.filter((l) => l.reqId === 'req-42').length).toBeGreaterThanOrEqual(2);
    await app.close();
  });

  it('makes no per-request log call below debug (Fastify\'s "incoming request" line is not even attempted)', async () => {
    const { app, lines } = await appAt('log');
    const calls = jest.spyOn(LazyRequestLogger.prototype, 'info');
    try {
      const res = await app.inject({ url: '/x', headers: { 'x-request-id': 'req-43' } });
      expect(res.statusCode).toBe(200);
      expect(calls).not.toHaveBeenCalled();
      expect(lines).toHaveLength(0);
    } finally {
      calls.mockRestore();
      await app.close();
    }
  });

  it('numbers new request ids after one random prefix per process part', () => {
    const a = requestIds();
    const b = requestIds();
    const fromA = [a(), a(), a()];
    expect(fromA.map((id) => id.split('-')[1])).toEqual(['1', '2', '3']);
    expect(fromA[0]).toMatch(/^[0-9a-z]{6}-1$/);
    expect(new Set(fromA.map((id) => id.split('-')[0])).size).toBe(1);
    expect(b().split('-')[0]).not.toBe(fromA[0].split('-')[0]);
  });

  it('keeps the random prefix at six digits, leading zeros included', () => {
    // The module object src's `import { randomInt }` reads at each call (CommonJS).
    const crypto = jest.requireActual<Record<'randomInt', (max: number) => number>>('node:crypto');
    const draws = jest.spyOn(crypto, 'randomInt');
    draws.mockReturnValueOnce(0).mockReturnValueOnce(36 ** 6 - 1);
    try {
      expect(requestIds()()).toBe('000000-1');
      expect(requestIds()()).toBe('zzzzzz-1');
      expect(draws).toHaveBeenCalledWith(36 ** 6);
    } finally {
      draws.mockRestore();
    }
  });

  it('keeps request ids at 12 characters at most: a new prefix when the counter would need a sixth digit', () => {
    const next = requestIds();
    const prefix = next().split('-')[0];
    let id = '';
    // 36^5 - 1 ids per prefix: the first was taken above.
    for (let i = 2; i < 36 ** 5; i++) {
      id = next();
    }
    expect(id).toBe(`${prefix}-zzzzz`);
    expect(id).toHaveLength(12);
    const rolled = next();
    expect(rolled).toMatch(/^[0-9a-z]{6}-1$/);
    expect(rolled.split('-')[0]).not.toBe(prefix);
  });

  it("writes Fastify's error lines with the reqId below debug", async () => {
    const { lines, stream } = capture();
    const app = fastifyWith('log', createRootLogger('log', stream));
    app.get('/fails', async () => {
      throw new Error('broken handler');
    });
    await app.ready();
    const res = await app.inject({ url: '/fails', headers: { 'x-request-id': 'req-9' } });
    expect(res.statusCode).toBe(500);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', reqId: 'req-9', msg: 'broken handler' });
    await app.close();
  });

  describe('a route without a request logger (withoutRequestLogger)', () => {
    async function quietApp(level: 'log' | 'debug') {
      const { lines, stream } = capture();
      const logging = new FastifyLogging(level, createRootLogger(level, stream));
      const app = Fastify(logging.options);
      logging.install(app as unknown as LoggingHost);
      const seen: unknown[] = [];
      const quiet = { childLoggerFactory: logging.withoutRequestLogger as never };
      app.get('/quiet', quiet, async (request) => {
        seen.push(request.log);
        return 'ok';
      });
      app.get('/quiet-fails', quiet, async () => {
        throw new Error('broken quiet handler');
      });
      app.get('/quiet-stream', quiet, async (_request, reply) => {
        const body = new Readable({ read() {} });
        setImmediate(() => body.destroy(new Error('stream broke')));
        return reply.header('content-type', 'text/plain').send(body);
      });
      await app.ready();
      return { app, lines, seen, logging };
    }

    it('makes no logger per request below debug: request.log is Fastify\'s silent one', async () => {
      const { app, lines, seen } = await quietApp('log');
      const res = await app.inject({ url: '/quiet' });
      expect(res.body).toBe('ok');
      expect(seen[0]).toBe(app.log);
      expect(seen[0]).not.toBeInstanceOf(LazyRequestLogger);
      expect(lines).toEqual([]);
      await app.close();
    });

    it("still writes Fastify's lines about such a request, with its reqId (its error handler, a broken stream)", async () => {
      const { app, lines } = await quietApp('log');
      const res = await app.inject({ url: '/quiet-fails', headers: { 'x-request-id': 'req-q1' } });
      expect(res.statusCode).toBe(500);
      expect(lines).toEqual([expect.objectContaining({ level: 'error', reqId: 'req-q1', msg: 'broken quiet handler' })]);
      lines.length = 0;
      await app.inject({ url: '/quiet-stream', headers: { 'x-request-id': 'req-q2' } }).catch(() => undefined);
      expect(lines).toEqual([expect.objectContaining({ level: 'error', reqId: 'req-q2', msg: 'stream broke' })]);
      await app.close();
    });

    it('gives a request its lazy logger once, on ensure, and leaves one that has a logger alone', async () => {
      const { app, logging } = await quietApp('log');
      const request = { id: 'r-1', log: app.log as unknown };
      const reply = { log: app.log as unknown };
      logging.ensure(request, reply);
      expect(request.log).toBeInstanceOf(LazyRequestLogger);
      expect(reply.log).toBe(request.log);
      const made = request.log;
      logging.ensure(request, reply);
      expect(request.log).toBe(made);
      expect(fastifyLoggingOf(app)).toBe(logging);
      await app.close();
    });

    it('logs each request at debug as any other route', async () => {
      const { app, lines, seen } = await quietApp('debug');
      await app.inject({ url: '/quiet', headers: { 'x-request-id': 'req-q3' } });
      expect(seen[0]).not.toBe(app.log);
      expect(lines.filter((l) => l.reqId === 'req-q3').length).toBeGreaterThanOrEqual(2);
      await app.close();
    });
  });

  it('makes the logger for a line that would be written only (ensureAt)', () => {
    const logging = new FastifyLogging('log', createRootLogger('log', capture().stream));
    const app = Fastify(logging.options);
    logging.install(app as unknown as LoggingHost);
    const request = { id: 'r-2', log: app.log as unknown };
    const reply = { log: app.log as unknown };
    logging.ensureAt('info', request, reply);
    expect(request.log).toBe(app.log);
    logging.ensureAt('warn', request, reply);
    expect(request.log).toBeInstanceOf(LazyRequestLogger);
  });

  it("offers no logger-free routes over a Fastify whose factory is not Fastify's own", () => {
    const logging = new FastifyLogging('log', createRootLogger('log', capture().stream));
    const app = Fastify({ ...logging.options, childLoggerFactory: (logger, bindings) => logger.child(bindings) });
    logging.install(app as unknown as LoggingHost);
    expect(logging.withoutRequestLogger).toBeUndefined();
    const unused = new FastifyLogging('log', createRootLogger('log', capture().stream));
    unused.install(Fastify(unused.options) as unknown as LoggingHost);
    expect(unused.withoutRequestLogger).toBeDefined();
  });

  it('refuses a second install', () => {
    const logging = new FastifyLogging('log', createRootLogger('log', capture().stream));
    logging.install(Fastify(logging.options) as unknown as LoggingHost);
    expect(() => logging.install(Fastify(logging.options) as unknown as LoggingHost)).toThrow(/already installed/);
  });

  it('is what Nest Logger instances write to once installed', () => {
    const { lines, stream } = capture();
    Logger.overrideLogger(new PinoNestLogger(createRootLogger('log', stream)));
    try {
      new Logger('Ctx').log('via nest');
    } finally {
      Logger.overrideLogger(['error', 'warn', 'log']);
    }
    expect(lines[0]).toMatchObject({ msg: 'via nest', context: 'Ctx' });
  });
});
