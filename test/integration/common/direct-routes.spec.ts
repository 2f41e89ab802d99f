import { CallHandler, CanActivate, Controller, ExecutionContext, Get, Module, NestInterceptor, Param, Query, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DirectRoute, serveDirect } from '../../../src/common/direct-routes';
import { ErrorFilter } from '../../../src/common/error.filter';
import { badInput } from '../../../src/common/id-gen.error';

let nestCalls = 0;
let intercepted = 0;

/** Runs only inside Nest's per-request pipeline. */
class CountingInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    intercepted++;
    return next.handle();
  }
}

@Controller('api/thing')
class ThingController {
  @Get(':key')
  async get(@Param('key') key: string, @Query() query: Record<string, unknown>): Promise<string | { ids: string[] }> {
    nestCalls++;
    if (key === 'bad') {
      throw badInput('key must not be bad');
    }
    return query.count === undefined ? `id-${key}` : { ids: [`id-${key}`] };
  }
}

class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

@Controller('api/guarded')
class GuardedController {
  @Get(':key')
  @UseGuards(DenyAll)
  get(@Param('key') key: string): string {
    return key;
  }
}

@Module({ controllers: [ThingController, GuardedController] })
class TestModule {}

const THING: DirectRoute<ThingController> = {
  method: 'GET',
  url: '/api/thing/:key',
  controller: ThingController,
  handler: 'get',
  call: (c, params, query) => c.get(params.key, query),
};

const GUARDED: DirectRoute<GuardedController> = {
  method: 'GET',
  url: '/api/guarded/:key',
  controller: GuardedController,
  handler: 'get',
  call: (c, params) => c.get(params.key),
};

async function createApp(): Promise<NestFastifyApplication> {
  return NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
}

describe('serveDirect: a controller method called straight from Fastify', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createApp();
    app.useGlobalFilters(new ErrorFilter());
    app.useGlobalInterceptors(new CountingInterceptor());
    serveDirect(app, [THING]);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers as Nest would: text/plain for a string, JSON for an object', async () => {
    const fastify = app.getHttpAdapter().getInstance();
    const text = await fastify.inject({ method: 'GET', url: '/api/thing/a' });
    expect(text.statusCode).toBe(200);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toBe('id-a');
    const json = await fastify.inject({ method: 'GET', url: '/api/thing/b?count=1' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(json.body)).toEqual({ ids: ['id-b'] });
  });

  it('maps errors as the global ErrorFilter does', async () => {
    const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/thing/bad' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'BAD_INPUT', message: 'key must not be bad' });
  });

  it("calls the method once per request, outside Nest's pipeline (a global interceptor never runs)", async () => {
    const before = nestCalls;
    await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/thing/c' });
    expect(nestCalls).toBe(before + 1);
    expect(intercepted).toBe(0);
  });

  it('still answers 404 for an empty path parameter, as Nest does', async () => {
    const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/thing/' });
    expect(res.statusCode).toBe(404);
  });

  it('refuses a route with a guard at start', async () => {
    const other = await createApp();
    try {
      expect(() => serveDirect(other, [GUARDED])).toThrow(/__guards__/);
    } finally {
      await other.close();
    }
  });
});
