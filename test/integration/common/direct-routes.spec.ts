import { Controller, Get, Headers, Module, Param, Query, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DirectRoute } from '../../../src/common/direct-routes/direct-route.decorator';
import { serveDirect } from '../../../src/common/direct-routes/serve-direct';
import { ErrorFilter } from '../../../src/common/error.filter';
import { badInput } from '../../../src/common/id-gen.error';

/** Whether each call of ThingController.get ran inside Nest's per-request pipeline. */
const throughNest: boolean[] = [];

@Controller('api/thing')
class ThingController {
  @DirectRoute()
  @Get(':key')
  async get(@Param('key') key: string, @Query() query: Record<string, unknown>): Promise<string | { ids: string[] }> {
    throughNest.push(new Error().stack?.includes('router-execution-context') ?? false);
    if (key === 'bad') {
      throw badInput('key must not be bad');
    }
    if (key === 'broken') {
      throw new Error('not a domain error');
    }
    return query.count === undefined ? `id-${key}` : { ids: [`id-${key}`] };
  }

  /** Not async, as the queue route: bad input throws before any promise, a failure rejects. */
  @DirectRoute()
  @Get('sync/:key')
  sync(@Param('key') key: string): Promise<string> {
    if (key === 'bad') {
      throw badInput('key must not be bad');
    }
    if (key === 'broken') {
      return Promise.reject(new Error('not a domain error'));
    }
    return Promise.resolve(`id-${key}`);
  }
}

/** Every argument kind a direct route serves, echoed back to compare with what Nest gives. */
@Controller('api/echo')
class EchoController {
  @DirectRoute()
  @Get('params/:a/:b')
  params(
    @Param() params: Record<string, string>,
    @Param('a') a: string,
    @Query() query: Record<string, unknown>,
    @Query('x') x: unknown,
    @Headers('X-Thing') thing: unknown,
  ): unknown {
    return { params, a, query, x, thing, types: [typeof a, typeof x] };
  }

  @DirectRoute()
  @Get('request')
  request(
    @Req() request: { url: string; headers: Record<string, unknown> },
    @Headers() headers: Record<string, unknown>,
    @Res({ passthrough: true }) reply: { header(name: string, value: string): unknown },
  ): string {
    reply.header('x-echo', request.url);
    return String(headers === request.headers);
  }

  /** An optional parameter: the router holds two routes (with and without it) for this one method. */
  @DirectRoute()
  @Get('opt/:a?')
  optional(@Param('a') a: unknown): unknown {
    return { a: a ?? null };
  }

  /** A parameter without a decorator is undefined in Nest; five arguments take the general call. */
  @DirectRoute()
  @Get('gap/:a')
  gap(
    @Param('a') a: string,
    undecorated: unknown,
    @Query('x') x: unknown,
    @Query('y') y: unknown,
    @Query('z') z: unknown,
  ): unknown {
    return { a, undecorated: typeof undecorated, x, y, z };
  }

  @DirectRoute()
  @Get('none')
  none(...args: unknown[]): unknown {
    return { args: args.length };
  }
}

@Module({ controllers: [ThingController, EchoController] })
class TestModule {}

/** `skipMiddie`: as bootstrap.ts, the direct routes take over their hooks (direct-lifecycle.ts); else they keep Fastify's. */
async function createApp(direct: boolean, skipMiddie = false): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter({ skipMiddie }), { logger: false });
  app.useGlobalFilters(new ErrorFilter());
  if (direct) {
    serveDirect(app);
  }
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe.each([
  ['running their own hooks', true],
  ["keeping Fastify's hooks", false],
])('serveDirect: controller methods marked @DirectRoute() called straight from Fastify, %s', (_name, skipMiddie) => {
  let direct: NestFastifyApplication;
  let nest: NestFastifyApplication;

  beforeAll(async () => {
    direct = await createApp(true, skipMiddie);
    nest = await createApp(false);
  });

  afterAll(async () => {
    await direct.close();
    await nest.close();
  });

  const get = (app: NestFastifyApplication, url: string, headers: Record<string, string> = {}) =>
    app.getHttpAdapter().getInstance().inject({ method: 'GET', url, headers });

  it('answers as Nest would: text/plain for a string, JSON for an object', async () => {
    const text = await get(direct, '/api/thing/a');
    expect(text.statusCode).toBe(200);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toBe('id-a');
    const json = await get(direct, '/api/thing/b?count=1');
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(json.body)).toEqual({ ids: ['id-b'] });
  });

  it('maps errors as the global ErrorFilter does, thrown or rejected', async () => {
    for (const url of ['/api/thing/bad', '/api/thing/broken', '/api/thing/sync/bad', '/api/thing/sync/broken']) {
      const [viaDirect, viaNest] = await Promise.all([get(direct, url), get(nest, url)]);
      expect(viaDirect.statusCode).toBe(viaNest.statusCode);
      expect(viaDirect.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(viaDirect.body)).toEqual(JSON.parse(viaNest.body));
    }
    for (const url of ['/api/thing/bad', '/api/thing/sync/bad']) {
      const bad = await get(direct, url);
      expect(bad.statusCode).toBe(400);
      expect(JSON.parse(bad.body)).toMatchObject({ error: 'BAD_INPUT', message: 'key must not be bad' });
    }
    const broken = await get(direct, '/api/thing/sync/broken');
    expect(broken.statusCode).toBe(500);
    expect(JSON.parse(broken.body)).toMatchObject({ error: 'INTERNAL' });
    expect((await get(direct, '/api/thing/sync/ok')).body).toBe('id-ok');
  });

  it("calls the method once per request, outside Nest's pipeline", async () => {
    throughNest.length = 0;
    await get(direct, '/api/thing/c');
    await get(nest, '/api/thing/c');
    expect(throughNest).toEqual([false, true]);
  });

  it('still answers 404 for an empty path parameter, as Nest does', async () => {
    for (const url of ['/api/thing/', '/api/echo/params//b']) {
      expect((await get(direct, url)).statusCode).toBe(404);
      expect((await get(nest, url)).statusCode).toBe(404);
    }
  });

  it('answers as Nest does on a route with an optional parameter, whichever form comes first', async () => {
    // Without the parameter first: its (empty) names must not stand for the form with it.
    for (const url of ['/api/echo/opt', '/api/echo/opt/', '/api/echo/opt/5']) {
      const [viaDirect, viaNest] = await Promise.all([get(direct, url), get(nest, url)]);
      expect([url, viaDirect.statusCode, viaDirect.body]).toEqual([url, viaNest.statusCode, viaNest.body]);
    }
  });

  it.each([
    ['/api/echo/params/7/x?x=1&y=two', { 'x-thing': 'h' }],
    ['/api/echo/params/07/x?x=1&x=2', {}],
    ['/api/echo/params/a%20b/x?x=', { 'X-Thing': 'upper' }],
    ['/api/echo/request?q=1', { 'x-thing': 'h' }],
    ['/api/echo/gap/1?x=1&y=2&z=3', {}],
    ['/api/echo/none', {}],
  ])('gives the method the same arguments as Nest: %s', async (url, headers) => {
    const [viaDirect, viaNest] = await Promise.all([get(direct, url, headers), get(nest, url, headers)]);
    expect(viaDirect.statusCode).toBe(200);
    expect(viaDirect.statusCode).toBe(viaNest.statusCode);
    expect(viaDirect.headers['content-type']).toBe(viaNest.headers['content-type']);
    expect(viaDirect.headers['x-echo']).toBe(viaNest.headers['x-echo']);
    expect(viaDirect.body).toBe(viaNest.body);
  });

  it('gives path parameters and query values as strings, unparsed', async () => {
    const res = await get(direct, '/api/echo/params/7/x?x=1');
    expect(JSON.parse(res.body)).toMatchObject({ a: '7', x: '1', types: ['string', 'string'] });
    const request = await get(direct, '/api/echo/request');
    expect(request.body).toBe('true');
    expect(request.headers['x-echo']).toBe('/api/echo/request');
    const gap = await get(direct, '/api/echo/gap/1?x=1');
    expect(JSON.parse(gap.body)).toEqual({ a: '1', undecorated: 'undefined', x: '1' });
  });

  it('serves the HEAD route Fastify adds to a GET as Nest does', async () => {
    const head = (app: NestFastifyApplication) => app.getHttpAdapter().getInstance().inject({ method: 'HEAD', url: '/api/thing/h' });
    const [viaDirect, viaNest] = await Promise.all([head(direct), head(nest)]);
    expect(viaDirect.statusCode).toBe(200);
    expect(viaDirect.headers['content-type']).toBe(viaNest.headers['content-type']);
    expect(viaDirect.body).toBe('');
  });
});
