import Fastify from 'fastify';
import { Logger } from '@nestjs/common';
import {
  LazyRequestLogger,
  PinoNestLogger,
  createRootLogger,
  fastifyLogOptions,
  echoRequestId,
  requestIds,
} from '../../../src/logging/pino-logger';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, stream: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } };
}

async function appAt(level: 'log' | 'debug') {
  const { lines, stream } = capture();
  const root = createRootLogger(level, stream);
  const app = Fastify(fastifyLogOptions(level, root));
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
    expect(String(fresh.headers['x-request-id'])).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
    const next = await app.inject({ url: '/x' });
    expect(next.headers['x-request-id']).not.toBe(fresh.headers['x-request-id']);
    expect(lines).toEqual([]);
    await app.close();
  });

  it('writes what a route logs through request.log with its reqId, and nothing below the level', async () => {
    const { lines, stream } = capture();
    const app = Fastify(fastifyLogOptions('log', createRootLogger('log', stream)));
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
    const app = Fastify(fastifyLogOptions('log', createRootLogger('log', stream)));
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
    const app = Fastify(fastifyLogOptions('log', createRootLogger('log', stream)));
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
    expect(new Set(fromA.map((id) => id.split('-')[0])).size).toBe(1);
    expect(b().split('-')[0]).not.toBe(fromA[0].split('-')[0]);
  });

  it("writes Fastify's error lines with the reqId below debug", async () => {
    const { lines, stream } = capture();
    const app = Fastify(fastifyLogOptions('log', createRootLogger('log', stream)));
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
