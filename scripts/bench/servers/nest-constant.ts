/**
 * The ceiling of a segment (or snowflake) request: the same Nest 11 + Fastify stack as the service
 * (same adapter options), one controller answering a constant ID as text/plain. Env: PORT.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

const CONSTANT_ID = '1234567890123456789';

@Controller('api')
class ConstantController {
  @Get('segment/get/:key')
  segment(@Param('key') _key: string): string {
    return CONSTANT_ID;
  }

  @Get('snowflake/get/:key')
  snowflake(@Param('key') _key: string): string {
    return CONSTANT_ID;
  }
}

@Module({ controllers: [ConstantController] })
class ConstantModule {}

async function main(): Promise<void> {
  const adapter = new FastifyAdapter({ routerOptions: { maxParamLength: 512 }, keepAliveTimeout: 65_000 });
  const app = await NestFactory.create<NestFastifyApplication>(ConstantModule, adapter, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT), '127.0.0.1');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
