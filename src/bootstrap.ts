import { NestFactory } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { ErrorFilter, toErrorResponse } from './common/error.filter';

/**
 * Builds the Nest application on Fastify (not yet listening). Used by main.ts and by the tests,
 * so tests run exactly the production wiring.
 */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.http.bodyLimit,
    routerOptions: { maxParamLength: 512 },
    // Router errors (a malformed %-escape, a path parameter over maxParamLength) in our shape too.
    frameworkErrors: (error: Error, _request: unknown, reply: unknown) => {
      const { status, body } = toErrorResponse(error);
      void (reply as FastifyReply).status(status).send(body);
    },
    // Behind a load balancer: keep-alive longer than typical LB idle timeouts.
    keepAliveTimeout: 65_000,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: loggerLevels(config.log.level),
    bufferLogs: false,
  });
  // Also receives Fastify's own errors (bad JSON, content type, body size): Nest routes them here.
  app.useGlobalFilters(new ErrorFilter());
  app.enableShutdownHooks();
  return app;
}

function loggerLevels(level: AppConfig['log']['level']): Array<'error' | 'warn' | 'log' | 'debug' | 'verbose' | 'fatal'> {
  const order = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
  return order.slice(0, order.indexOf(level) + 1);
}
