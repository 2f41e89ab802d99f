import { tracingChannel } from 'node:diagnostics_channel';
import { Controller, Get, Module, Param, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DirectRoute } from '../../../src/common/direct-routes/direct-route.decorator';
import { serveDirect } from '../../../src/common/direct-routes/serve-direct';
import { ErrorFilter } from '../../../src/common/error.filter';
import { FastifyLogging, LoggingHost } from '../../../src/logging/fastify-logging';
import { LazyRequestLogger } from '../../../src/logging/lazy-request-logger';
import { createRootLogger } from '../../../src/logging/pino-logger';

@Controller('api/quiet')
class QuietController {
  /** Given neither request nor reply: served without a request logger. */
  @DirectRoute()
  @Get(':key')
  get(@Param('key') key: string): Promise<string> {
    return Promise.resolve(`id-${key}`);
  }
}

@Controller('api/given')
class GivenController {
  /** Given the request: it may log through request.log, which must be there. */
  @DirectRoute()
  @Get(':key')
  get(@Param('key') key: string, @Req() request: FastifyRequest): string {
    request.log.warn({ key }, 'logged by the method');
    return `id-${key}`;
  }
}

@Controller('api/chosen')
class ChosenController {
  /** Given the reply, but declared to log elsewhere (as the queue route). */
  @DirectRoute({ requestLogger: false })
  @Get('none/:key')
  none(@Param('key') key: string, @Res({ passthrough: true }) reply: FastifyReply): string {
    reply.header('x-key', key);
    return `id-${key}`;
  }

  /** Given the reply: it may log through reply.log. */
  @DirectRoute()
  @Get('reply/:key')
  reply(@Param('key') key: string, @Res({ passthrough: true }) reply: FastifyReply): string {
    reply.log.warn('logged through the reply');
    return `id-${key}`;
  }

  /** Given neither, but asks for one. */
  @DirectRoute({ requestLogger: true })
  @Get('asked/:key')
  asked(@Param('key') key: string): string {
    return `id-${key}`;
  }
}

@Module({ controllers: [QuietController, GivenController, ChosenController] })
class TestModule {}

/** The logging and direct routes wired as bootstrap.ts wires them; `seen`: each request's log, after its reply. */
async function build(): Promise<{ app: NestFastifyApplication; lines: Array<Record<string, unknown>>; seen: unknown[] }> {
  const lines: Array<Record<string, unknown>> = [];
  const logging = new FastifyLogging('log', createRootLogger('log', { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) }));
  const adapter = new FastifyAdapter({ ...logging.options, skipMiddie: true });
  logging.install(adapter.getInstance<LoggingHost>());
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, adapter, { logger: false });
  app.useGlobalFilters(new ErrorFilter());
  serveDirect(app);
  const seen: unknown[] = [];
  adapter.getInstance().addHook('onResponse', (request, _reply, done) => {
    seen.push(request.log);
    done();
  });
  await app.init();
  await adapter.getInstance().ready();
  return { app, lines, seen };
}

describe('direct routes and request loggers', () => {
  let built: Awaited<ReturnType<typeof build>>;

  beforeAll(async () => {
    built = await build();
  });

  afterAll(async () => {
    await built.app.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    built.app.getHttpAdapter().getInstance().inject({ method: 'GET', url, headers });

  it('makes no request logger for a method given neither request nor reply', async () => {
    built.seen.length = 0;
    for (let i = 0; i < 3; i++) {
      expect((await get(`/api/quiet/${i}`)).body).toBe(`id-${i}`);
    }
    const silent = built.app.getHttpAdapter().getInstance().log;
    expect(built.seen).toEqual([silent, silent, silent]);
    expect(built.lines).toEqual([]);
  });

  it('gives a method that takes the request its logger, with the reqId', async () => {
    built.seen.length = 0;
    built.lines.length = 0;
    expect((await get('/api/given/7', { 'x-request-id': 'req-given' })).body).toBe('id-7');
    expect(built.seen[0]).toBeInstanceOf(LazyRequestLogger);
    expect(built.lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'logged by the method', key: '7', reqId: 'req-given' })]);
  });

  it('follows the route\'s requestLogger option, and gives a method that takes the reply its logger', async () => {
    const silent = built.app.getHttpAdapter().getInstance().log;
    built.seen.length = 0;
    built.lines.length = 0;
    const none = await get('/api/chosen/none/1');
    expect([none.body, none.headers['x-key']]).toEqual(['id-1', '1']);
    expect((await get('/api/chosen/reply/2', { 'x-request-id': 'req-reply' })).body).toBe('id-2');
    expect((await get('/api/chosen/asked/3')).body).toBe('id-3');
    expect(built.seen[0]).toBe(silent);
    expect(built.seen[1]).toBeInstanceOf(LazyRequestLogger);
    expect(built.seen[2]).toBeInstanceOf(LazyRequestLogger);
    expect(built.lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'logged through the reply', reqId: 'req-reply' })]);
  });

  it("makes the logger when the request goes Fastify's tracing path (an APM subscriber)", async () => {
    const channel = tracingChannel('fastify.request.handler');
    const subscriber = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
    channel.subscribe(subscriber);
    try {
      built.seen.length = 0;
      expect((await get('/api/quiet/t')).body).toBe('id-t');
      expect(built.seen[0]).toBeInstanceOf(LazyRequestLogger);
    } finally {
      channel.unsubscribe(subscriber);
    }
  });
});
