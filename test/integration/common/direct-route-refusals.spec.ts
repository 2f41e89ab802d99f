import {
  ArgumentsHost,
  Body,
  CallHandler,
  CanActivate,
  Catch,
  Controller,
  createParamDecorator,
  ExceptionFilter,
  ExecutionContext,
  Get,
  Header,
  HttpCode,
  Injectable,
  Ip,
  Module,
  NestInterceptor,
  Next,
  Param,
  ParseIntPipe,
  PipeTransform,
  Post,
  Provider,
  Query,
  Redirect,
  Render,
  Req,
  Res,
  Scope,
  Sse,
  Type,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication, RouteConfig } from '@nestjs/platform-fastify';
import { DirectRoute } from '../../../src/common/direct-routes/direct-route.decorator';
import { serveDirect } from '../../../src/common/direct-routes/serve-direct';
import { ErrorFilter } from '../../../src/common/error.filter';

@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

@Injectable()
class Passthrough implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

@Injectable()
class Identity implements PipeTransform {
  transform(value: unknown): unknown {
    return value;
  }
}

@Catch()
class Swallow implements ExceptionFilter {
  catch(_error: unknown, _host: ArgumentsHost): void {}
}

const Custom = createParamDecorator((_data: unknown, context: ExecutionContext) => context.getType());

async function appWith(controller: Type, providers: Provider[] = []): Promise<NestFastifyApplication> {
  @Module({ controllers: [controller], providers })
  class TestModule {}
  return NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
}

/** serveDirect refuses the controller at once, with a message naming the method and the reason. */
async function expectRefused(controller: Type, reason: RegExp): Promise<void> {
  const app = await appWith(controller);
  try {
    expect(() => serveDirect(app)).toThrow(/^\w+\.get is marked @DirectRoute\(\) but cannot be served directly: /);
    expect(() => serveDirect(app)).toThrow(reason);
  } finally {
    await app.close();
  }
}

/** A controller whose `get` is a direct route, with `decorate` (if any) applied to the class or the method. */
function controllerWith(on?: 'controller' | 'method', decorate?: ClassDecorator | MethodDecorator): Type {
  @Controller('api/x')
  class X {
    @DirectRoute()
    @Get(':key')
    get(@Param('key') key: string): string {
      return key;
    }
  }
  if (on === 'controller') {
    (decorate as ClassDecorator)(X);
  } else if (on === 'method') {
    (decorate as MethodDecorator)(X.prototype, 'get', Object.getOwnPropertyDescriptor(X.prototype, 'get')!);
  }
  return X;
}

describe('serveDirect refuses at start what a direct call would skip', () => {
  describe.each(['controller', 'method'] as const)('an enhancer on the %s', (on) => {
    it.each([
      ['guards', UseGuards(DenyAll), /has guards \(@UseGuards\)/],
      ['interceptors', UseInterceptors(Passthrough), /has interceptors \(@UseInterceptors\)/],
      ['exception filters', UseFilters(Swallow), /has exception filters \(@UseFilters\)/],
      ['pipes', UsePipes(Identity), /has pipes \(@UsePipes\)/],
    ])('%s', async (_what, decorate, reason) => {
      const where = on === 'controller' ? /its controller has/ : /: it has/;
      await expectRefused(controllerWith(on, decorate), reason);
      await expectRefused(controllerWith(on, decorate), where);
    });
  });

  it('a parameter pipe (which answered 200 with a string before it was refused)', async () => {
    @Controller('api/x')
    class ParamPipe {
      @DirectRoute()
      @Get(':n')
      get(@Param('n', ParseIntPipe) n: number): number {
        return n;
      }
    }
    await expectRefused(ParamPipe, /argument 0 has parameter pipes/);
  });

  it('a pipe on a whole-query argument', async () => {
    @Controller('api/x')
    class QueryPipe {
      @DirectRoute()
      @Get()
      get(@Query(Identity) query: unknown): unknown {
        return query;
      }
    }
    await expectRefused(QueryPipe, /argument 0 has parameter pipes/);
  });

  it.each([
    ['@Body() on a GET', (target: object, key: string) => Body()(target, key, 1), /argument 1: @Body\(\) is not supported/],
    ['@Ip()', (target: object, key: string) => Ip()(target, key, 1), /argument 1: @Ip\(\) is not supported/],
    ['@Next()', (target: object, key: string) => Next()(target, key, 1), /argument 1: @Next\(\) is not supported/],
    ['@Res() without passthrough', (target: object, key: string) => Res()(target, key, 1), /argument 1: @Res\(\) without \{ passthrough: true \}/],
    ['a custom parameter decorator', (target: object, key: string) => Custom()(target, key, 1), /argument 1 comes from a custom parameter decorator/],
  ])('an argument it cannot give: %s', async (_what, decorateArg, reason) => {
    @Controller('api/x')
    class Arg {
      @DirectRoute()
      @Get(':key')
      get(@Param('key') key: string, other?: unknown): unknown {
        return [key, other];
      }
    }
    decorateArg(Arg.prototype, 'get');
    await expectRefused(Arg, reason);
  });

  it.each([
    ['@HttpCode()', HttpCode(204), /it has @HttpCode\(\)/],
    ['@Header()', Header('cache-control', 'none'), /it has @Header\(\)/],
    ['@Redirect()', Redirect('/elsewhere'), /it has @Redirect\(\)/],
    ['@Render()', Render('page'), /it has @Render\(\)/],
    ['@Sse()', Sse('events'), /it has @Sse\(\)/],
    ['@Post()', Post('p'), /only GET routes are served directly, not POST/],
  ])("what Nest's response handling does: %s", async (_what, decorate, reason) => {
    await expectRefused(controllerWith('method', decorate), reason);
  });

  it('a method that is not a route', async () => {
    @Controller('api/x')
    class NoRoute {
      @DirectRoute()
      get(): string {
        return 'x';
      }
    }
    await expectRefused(NoRoute, /it is not a route \(no @Get\(\)\)/);
  });

  it('a controller bound to a host', async () => {
    @Controller({ path: 'api/x', host: 'ids.example' })
    class HostBound {
      @DirectRoute()
      @Get()
      get(): string {
        return 'x';
      }
    }
    await expectRefused(HostBound, /its controller is bound to a host/);
  });

  it('a request-scoped controller', async () => {
    @Controller({ path: 'api/x', scope: Scope.REQUEST })
    class PerRequest {
      @DirectRoute()
      @Get()
      get(): string {
        return 'x';
      }
    }
    await expectRefused(PerRequest, /its controller is request-scoped/);
  });

  it('every reason at once, not only the first', async () => {
    @Controller('api/x')
    @UseGuards(DenyAll)
    class Many {
      @DirectRoute()
      @Get(':n')
      @UseInterceptors(Passthrough)
      get(@Param('n', ParseIntPipe) n: number): number {
        return n;
      }
    }
    await expectRefused(Many, /its controller has guards.*it has interceptors.*argument 0 has parameter pipes/);
  });

  it('a @RouteConfig() applied above @DirectRoute(), which hides the route from serveDirect', async () => {
    @Controller('api/x')
    class Hidden {
      @RouteConfig({ anything: true })
      @DirectRoute()
      @Get()
      get(): string {
        return 'x';
      }
    }
    const app = await appWith(Hidden);
    try {
      serveDirect(app);
      await app.init();
      await expect(app.getHttpAdapter().getInstance().ready()).rejects.toThrow(
        /marked @DirectRoute\(\) but registered by Nest without its marker: Hidden\.get/,
      );
    } finally {
      await app.close().catch(() => undefined);
    }
  });

  it('keeps a @RouteConfig() applied below @DirectRoute()', async () => {
    @Controller('api/x')
    class Configured {
      @DirectRoute()
      @RouteConfig({ label: 'kept' })
      @Get()
      get(@Req() request: { routeOptions: { config: { label?: string } } }): string {
        return request.routeOptions.config.label ?? 'lost';
      }
    }
    const app = await appWith(Configured);
    try {
      serveDirect(app);
      await app.init();
      const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/x' });
      expect(res.body).toBe('kept');
    } finally {
      await app.close();
    }
  });

  describe('app-wide enhancers, when Nest registers the routes', () => {
    const Plain = controllerWith();

    /**
     * app.init() (Nest's route registration) fails naming the route and the app-wide enhancer;
     * `use` runs after serveDirect, as the check runs when Nest reads them: at registration.
     */
    async function expectInitRefused(app: NestFastifyApplication, reason: RegExp, use?: (app: NestFastifyApplication) => void): Promise<void> {
      try {
        serveDirect(app);
        use?.(app);
        const error = await app.init().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/^X\.get is marked @DirectRoute\(\) but cannot be served directly: /);
        expect((error as Error).message).toMatch(reason);
      } finally {
        await app.close().catch(() => undefined);
      }
    }

    it.each([
      ['useGlobalGuards', (app: NestFastifyApplication) => app.useGlobalGuards(new DenyAll()), /the app has 1 app-wide guard/],
      ['useGlobalPipes', (app: NestFastifyApplication) => app.useGlobalPipes(new Identity()), /the app has 1 app-wide pipe/],
      ['useGlobalInterceptors', (app: NestFastifyApplication) => app.useGlobalInterceptors(new Passthrough()), /the app has 1 app-wide interceptor/],
      ['useGlobalFilters (other than ErrorFilter)', (app: NestFastifyApplication) => app.useGlobalFilters(new Swallow(), new ErrorFilter()), /the app has 1 app-wide exception filter/],
    ])('%s', async (_what, use, reason) => {
      await expectInitRefused(await appWith(Plain), reason, use);
    });

    it.each([
      ['APP_GUARD', { provide: APP_GUARD, useClass: DenyAll }, /the app has 1 app-wide guard/],
      ['APP_PIPE', { provide: APP_PIPE, useClass: Identity }, /the app has 1 app-wide pipe/],
      ['APP_INTERCEPTOR', { provide: APP_INTERCEPTOR, useClass: Passthrough }, /the app has 1 app-wide interceptor/],
      ['APP_FILTER', { provide: APP_FILTER, useClass: Swallow }, /the app has 1 app-wide exception filter/],
    ])('%s provider', async (_what, provider, reason) => {
      await expectInitRefused(await appWith(Plain, [provider]), reason);
    });

    it('a request-scoped APP_GUARD provider (Nest then makes every controller request-scoped)', async () => {
      const app = await appWith(Plain, [{ provide: APP_GUARD, useClass: DenyAll, scope: Scope.REQUEST }]);
      try {
        expect(() => serveDirect(app)).toThrow(/X\.get .* its controller is request-scoped/);
      } finally {
        await app.close();
      }
    });

    it('but not the ErrorFilter, which the direct route applies itself', async () => {
      const app = await appWith(Plain, [{ provide: APP_FILTER, useClass: ErrorFilter }]);
      try {
        app.useGlobalFilters(new ErrorFilter());
        serveDirect(app);
        await app.init();
        const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/x/k' });
        expect(res.body).toBe('k');
      } finally {
        await app.close();
      }
    });
  });
});
