import { tracingChannel } from 'node:diagnostics_channel';
import { request as httpRequest } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { Controller, Get, MiddlewareConsumer, Module, NestModule, Param, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Registry } from 'prom-client';
import { DirectRoute } from '../../../src/common/direct-routes/direct-route.decorator';
import { serveDirect } from '../../../src/common/direct-routes/serve-direct';
import { ErrorFilter } from '../../../src/common/error.filter';
import { ErrorKind, IdGenError, badInput } from '../../../src/common/id-gen.error';
import { refuseMiddleware } from '../../../src/common/no-middleware';
import { installShutdownGate } from '../../../src/common/shutdown-gate';
import { installHttpMetrics } from '../../../src/metrics/http-metrics.hook';

/** The last request the direct route saw (to read its route context). */
let lastRequest: FastifyRequest | undefined;
/** Called when a `/api/id/hold` request reached the method; settles it. */
let heldArrived: () => void = () => undefined;
let releaseHeld: () => void = () => undefined;

@Controller('api/id')
class IdController {
  /** Shaped as the queue route: not async, bad input throws, a failure rejects. */
  @DirectRoute()
  @Get(':appId')
  get(@Param('appId') appId: string, @Req() request: FastifyRequest): Promise<string> {
    lastRequest = request;
    if (appId === 'bad') {
      throw badInput('appId must be an integer');
    }
    if (appId === 'empty') {
      return Promise.reject(new IdGenError(ErrorKind.QueueEmpty, 'the queue is empty; retry later'));
    }
    if (appId === 'hold') {
      heldArrived();
      return new Promise((resolve) => (releaseHeld = () => resolve('held')));
    }
    return Promise.resolve(`${appId}00`);
  }
}

/** Replies a direct route's method may give: sent by itself, an object, one that does not serialize. */
@Controller('api/odd')
class OddController {
  @DirectRoute()
  @Get(':mode')
  async get(@Param('mode') mode: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    await Promise.resolve();
    switch (mode) {
      case 'self':
        void reply.send('sent by the method');
        return undefined;
      case 'return':
        return reply.send('returned by the method');
      case 'bigint':
        return { id: 1n };
      case 'object':
        return { ids: ['1', '2'] };
      default:
        return mode;
    }
  }
}

@Module({ controllers: [IdController, OddController] })
class TestModule {}

interface Built {
  app: NestFastifyApplication;
  register: Registry;
}

/**
 * The app's wiring of bootstrap.ts (direct routes, the gate, the HTTP metrics) on a module of its
 * own. `skipMiddie` as in bootstrap.ts: the route takes over its hooks; without it, @fastify/middie's
 * hook is one it does not know and the route keeps Fastify's.
 */
async function build(skipMiddie: boolean, beforeInit?: (app: NestFastifyApplication) => void): Promise<Built> {
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter({ skipMiddie, requestIdHeader: 'x-request-id', return503OnClosing: false }), { logger: false });
  app.useGlobalFilters(new ErrorFilter());
  serveDirect(app);
  installShutdownGate(app);
  const register = new Registry();
  installHttpMetrics(app.getHttpAdapter().getInstance(), register);
  beforeInit?.(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return { app, register };
}

/** The hook lists left on the route context of the request (Fastify's private Symbol(fastify.context)). */
function hooksOf(request: FastifyRequest | undefined): { onRequest: unknown; onSend: unknown } {
  const key = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context');
  const context = (request as unknown as Record<symbol, { onRequest: unknown; onSend: unknown }>)[key!];
  return { onRequest: context.onRequest, onSend: context.onSend };
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const ROUTE = 'route="/api/id/:appId"';

async function counts(register: Registry): Promise<Record<string, number | undefined>> {
  const text = await register.metrics();
  return {
    ok: sample(text, `shardleaf_http_requests_total{method="GET",${ROUTE},status="200"}`),
    bad: sample(text, `shardleaf_http_requests_total{method="GET",${ROUTE},status="400"}`),
    unavailable: sample(text, `shardleaf_http_requests_total{method="GET",${ROUTE},status="503"}`),
    badInput: sample(text, `shardleaf_http_errors_total{${ROUTE},status="400",error="BAD_INPUT"}`),
    empty: sample(text, `shardleaf_http_errors_total{${ROUTE},status="503",error="QUEUE_EMPTY"}`),
    shuttingDown: sample(text, `shardleaf_http_errors_total{${ROUTE},status="503",error="SHUTTING_DOWN"}`),
    ids: sample(text, 'shardleaf_ids_issued_total{generator="queue"}'),
  };
}

/** One request on a connection of its own: status, headers, body. */
function getOnce(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The status line of a request sent as raw bytes, its target as given (`*api/id/1`, absolute form). */
function rawStatus(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data.split('\r\n')[0]));
    socket.on('error', reject);
  });
}

describe.each([
  ['takes over its hooks (skipMiddie, as bootstrap.ts)', true],
  ["keeps Fastify's hooks (a hook it does not know: @fastify/middie's)", false],
])('a direct route that %s', (_name, takesOver) => {
  let built: Built;

  beforeEach(async () => {
    built = await build(takesOver);
  });

  afterEach(async () => {
    await built.app.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    built.app.getHttpAdapter().getInstance().inject({ method: 'GET', url, headers });

  it(takesOver ? 'leaves no hook on its route context after its first request' : 'leaves the hooks on its route context', async () => {
    await get('/api/id/1');
    const left = hooksOf(lastRequest);
    if (takesOver) {
      expect(left).toEqual({ onRequest: null, onSend: null });
    } else {
      expect(Array.isArray(left.onRequest) && Array.isArray(left.onSend)).toBe(true);
    }
  });

  it('echoes the request id on every reply and counts every reply once, its first request and later ones', async () => {
    const urls = ['/api/id/1', '/api/id/2', '/api/id/bad', '/api/id/empty', '/api/id/3', '/api/id/bad'];
    for (const [i, url] of urls.entries()) {
      const res = await get(url, { 'x-request-id': `req-${i}` });
      expect(res.headers['x-request-id']).toBe(`req-${i}`);
    }
    const ok = await get('/api/id/4');
    expect({ status: ok.statusCode, body: ok.body, type: ok.headers['content-type'] }).toEqual({
      status: 200,
      body: '400',
      type: 'text/plain; charset=utf-8',
    });
    expect(String(ok.headers['x-request-id'])).not.toBe('');
    const bad = await get('/api/id/bad');
    expect({ status: bad.statusCode, error: bad.json<{ error: string }>().error }).toEqual({ status: 400, error: 'BAD_INPUT' });
    const empty = await get('/api/id/empty');
    expect({ status: empty.statusCode, error: empty.json<{ error: string }>().error }).toEqual({ status: 503, error: 'QUEUE_EMPTY' });
    expect(await counts(built.register)).toEqual({
      ok: 4,
      bad: 3,
      unavailable: 2,
      badInput: 3,
      empty: 2,
      shuttingDown: undefined,
      ids: 4,
    });
  });

  it('counts a HEAD request once (its route keeps its own hooks)', async () => {
    await get('/api/id/1');
    const head = await built.app.getHttpAdapter().getInstance().inject({ method: 'HEAD', url: '/api/id/2' });
    expect({ status: head.statusCode, body: head.body }).toEqual({ status: 200, body: '' });
    const text = await built.register.metrics();
    expect(sample(text, `shardleaf_http_requests_total{method="HEAD",${ROUTE},status="200"}`)).toBe(1);
    expect(sample(text, `shardleaf_http_requests_total{method="GET",${ROUTE},status="200"}`)).toBe(1);
  });

  it('answers a target Nest does not route (`*api/id/1`) with 404, an absolute-form target with the ID', async () => {
    await built.app.listen(0, '127.0.0.1');
    const port = (built.app.getHttpServer().address() as AddressInfo).port;
    for (let i = 0; i < 2; i++) {
      // Twice: the route's first request and a later one.
      expect(await rawStatus(port, '*api/id/1')).toBe('HTTP/1.1 404 Not Found');
      expect(await rawStatus(port, 'http://x/api/id/1')).toBe('HTTP/1.1 200 OK');
      expect(await rawStatus(port, '/api/id/1')).toBe('HTTP/1.1 200 OK');
    }
    expect((await counts(built.register)).ok).toBe(4);
    // The two 404s counted once each, under the not-found handler's label.
    expect(sample(await built.register.metrics(), 'shardleaf_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(2);
  });

  it('refuses a request that arrives while the app closes (SHUTTING_DOWN, connection: close, the request id), counted once', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await built.app.close();
    built = await build(takesOver, (app) => {
      // Holds the close after the gate turned on, so that requests arrive meanwhile.
      app.getHttpAdapter().getInstance().addHook('preClose', (done) => void held.then(() => done()));
    });
    await built.app.listen(0, '127.0.0.1');
    const port = (built.app.getHttpServer().address() as AddressInfo).port;
    expect((await getOnce(port, '/api/id/1')).status).toBe(200);
    // In flight when the close begins: the method has it (a fixed wait lost that race on a busy machine).
    const arrived = new Promise<void>((resolve) => (heldArrived = resolve));
    const inFlight = getOnce(port, '/api/id/hold');
    await arrived;
    const closing = built.app.close();
    try {
      const refused = await getOnce(port, '/api/id/2', { 'x-request-id': 'late-1' });
      expect({ status: refused.status, error: JSON.parse(refused.body).error, id: refused.headers['x-request-id'], connection: refused.headers.connection }).toEqual({
        status: 503,
        error: 'SHUTTING_DOWN',
        id: 'late-1',
        connection: 'close',
      });
      releaseHeld();
      const finished = await inFlight;
      expect({ status: finished.status, body: finished.body, connection: finished.headers.connection }).toEqual({ status: 200, body: 'held', connection: 'close' });
      expect(await counts(built.register)).toMatchObject({ ok: 2, unavailable: 1, shuttingDown: 1, ids: 2 });
    } finally {
      release();
      await closing;
    }
    // Closed here: afterEach's close finds it closed.
    built = await build(takesOver);
  });

  it("publishes the handler's async end to Fastify's tracing channel and still counts each reply once", async () => {
    const ends: string[] = [];
    const errors: string[] = [];
    const subscribers = {
      start: () => undefined,
      end: () => undefined,
      asyncStart: () => undefined,
      asyncEnd: (store: unknown) => ends.push(String((store as { request: { url: string } }).request.url)),
      error: (store: unknown) => errors.push(String((store as { request: { url: string } }).request.url)),
    };
    const channel = tracingChannel('fastify.request.handler');
    channel.subscribe(subscribers);
    try {
      for (const url of ['/api/id/1', '/api/id/2', '/api/id/empty', '/api/id/bad']) {
        await get(url, { 'x-request-id': 'traced' }).then((res) => expect(res.headers['x-request-id']).toBe('traced'));
      }
    } finally {
      channel.unsubscribe(subscribers);
    }
    expect(ends).toEqual(['/api/id/1', '/api/id/2', '/api/id/empty']);
    expect(errors).toEqual(['/api/id/empty', '/api/id/bad']);
    expect(await counts(built.register)).toMatchObject({ ok: 2, badInput: 1, empty: 1, ids: 2 });
  });
  it('notes once a reply the method sent itself, an object, a payload that does not serialize', async () => {
    const odd = (mode: string) => get(`/api/odd/${mode}`, { 'x-request-id': `odd-${mode}` });
    const first = await odd('plain');
    expect({ status: first.statusCode, body: first.body }).toEqual({ status: 200, body: 'plain' });
    for (const mode of ['self', 'return']) {
      const res = await odd(mode);
      expect({ status: res.statusCode, id: res.headers['x-request-id'] }).toEqual({ status: 200, id: `odd-${mode}` });
      expect(res.body).toMatch(/by the method$/);
    }
    const object = await odd('object');
    expect({ status: object.statusCode, type: object.headers['content-type'], body: object.json() }).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: { ids: ['1', '2'] },
    });
    const bigint = await odd('bigint');
    expect({ status: bigint.statusCode, error: bigint.json<{ error: string }>().error }).toEqual({ status: 500, error: 'INTERNAL' });
    expect((await odd('after')).body).toBe('after');
    const text = await built.register.metrics();
    const route = 'route="/api/odd/:mode"';
    expect(sample(text, `shardleaf_http_requests_total{method="GET",${route},status="200"}`)).toBe(5);
    expect(sample(text, `shardleaf_http_requests_total{method="GET",${route},status="500"}`)).toBe(1);
  });

  it('keeps its Fastify hooks when the app has an onError hook, which then sees its errors', async () => {
    await built.app.close();
    const seen: string[] = [];
    built = await build(takesOver, (app) => {
      app.getHttpAdapter().getInstance().addHook('onError', (request, _reply, error, done) => {
        seen.push(`${request.url} ${error.message}`);
        done();
      });
    });
    await get('/api/id/1');
    expect(Array.isArray(hooksOf(lastRequest).onRequest)).toBe(true);
    const bad = await get('/api/id/bad');
    expect(bad.statusCode).toBe(400);
    expect(seen).toEqual(['/api/id/bad appId must be an integer']);
    expect(await counts(built.register)).toMatchObject({ ok: 1, bad: 1, badInput: 1 });
  });
});

@Module({ controllers: [IdController] })
class MiddlewareModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply((_req: unknown, _res: unknown, next: () => void) => next()).forRoutes('*');
  }
}

describe('Nest middleware on the adapter without middie (bootstrap.ts)', () => {
  const message = /^Nest middleware is not supported: the Fastify adapter runs without @fastify\/middie/;

  it('fails the start with a message saying so, for configure(consumer) and for app.use()', async () => {
    const adapter = new FastifyAdapter({ skipMiddie: true });
    refuseMiddleware(adapter);
    const app = await NestFactory.create<NestFastifyApplication>(MiddlewareModule, adapter, { logger: false, abortOnError: false });
    await expect(app.init()).rejects.toThrow(message);
    expect(() => app.use(() => undefined)).toThrow(message);
    await app.close();
  });
});
