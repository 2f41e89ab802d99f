/**
 * CPU per request of the logging glue alone: one Nest 11 + Fastify app answering a constant on a
 * direct-free route, requests sent with Fastify's `inject` (no sockets), each variant in a process
 * of its own (nestjs-pino's AsyncLocalStorage turns on promise hooks for the whole process),
 * variants alternated, `rounds` times. Prints µs of process CPU (user + system) per request,
 * median of the rounds, and the difference to the variant without any logger.
 *
 *   node -r ts-node/register/transpile-only scripts/bench/logging-cost.ts [rounds=5] [requests=30000]
 *
 * Variants: `none` (Fastify without a logger, no request id echo: the floor), `ours`
 * (src/logging/pino-logger.ts and fastify-logging.ts as the service wires them: Fastify on our pino
 * root, the lazy request logger, the request-id echo), `nestjs-pino` (LoggerModule.forRoot of nestjs-pino with pino-http,
 * the same level, request id and echo) and `nestjs-pino-existing` (its `useExisting: true`: only its
 * AsyncLocalStorage middleware, Fastify's logger as ours). The nestjs-pino variants need
 * `npm install --no-save nestjs-pino pino-http` (they are not dependencies of the project).
 * BASE_LOGGING=path/to/pino-logger.js adds `base`: another build's logging (its `fastifyLogOptions`,
 * or its fastify-logging.js beside it).
 */
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { Controller, DynamicModule, Get, LoggerService, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { dirname, join } from 'node:path';
import * as ours from '../../src/logging/pino-logger';
import * as oursFastify from '../../src/logging/fastify-logging';

const VARIANTS = ['none', 'ours', 'nestjs-pino', 'nestjs-pino-existing'];

@Controller()
class ConstantController {
  @Get('x')
  x(): string {
    return '1234567890123456789';
  }
}

@Module({ controllers: [ConstantController] })
class ConstantModule {}

/** Lines go nowhere (none is written at this level anyway). */
const devNull = new Writable({ write: (_chunk, _enc, done) => done() });

type Logging = typeof ours;
type OldLogging = { fastifyLogOptions?: (level: 'log', root: unknown) => object };

/** A Nest Fastify adapter with a build's Fastify logging installed as bootstrap.ts does. */
function adapterWith(logging: Logging, root: ReturnType<Logging['createRootLogger']>, dir?: string): FastifyAdapter {
  const old = (logging as OldLogging).fastifyLogOptions;
  if (old !== undefined) {
    return new FastifyAdapter(old('log', root));
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fastifyLogging = dir === undefined ? oursFastify : (require(join(dir, 'fastify-logging')) as typeof oursFastify);
  const setup = new fastifyLogging.FastifyLogging('log', root);
  const adapter = new FastifyAdapter(setup.options as object);
  setup.install(adapter.getInstance<oursFastify.LoggingHost>());
  return adapter;
}

async function build(variant: string): Promise<NestFastifyApplication> {
  if (variant === 'none') {
    return NestFactory.create<NestFastifyApplication>(ConstantModule, new FastifyAdapter(), { logger: false });
  }
  if (variant === 'ours' || variant === 'base') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const logging = variant === 'base' ? (require(process.env.BASE_LOGGING as string) as Logging) : ours;
    const root = logging.createRootLogger('log', devNull);
    const adapter = adapterWith(logging, root, variant === 'base' ? dirname(process.env.BASE_LOGGING as string) : undefined);
    const app = await NestFactory.create<NestFastifyApplication>(ConstantModule, adapter, { logger: new logging.PinoNestLogger(root) });
    echoIds(adapter);
    return app;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const np = require('nestjs-pino') as {
    LoggerModule: { forRoot(params: object): DynamicModule };
    Logger: Type<LoggerService>;
  };
  const existing = variant === 'nestjs-pino-existing';
  const root = ours.createRootLogger('log', devNull);
  const nextId = ours.requestIds();
  @Module({
    imports: [
      ConstantModule,
      np.LoggerModule.forRoot(
        existing
          ? { useExisting: true }
          : {
              pinoHttp: {
                logger: root.child({}, { level: 'warn' }),
                genReqId: (req: { headers: Record<string, unknown> }) => {
                  const given = req.headers['x-request-id'];
                  return typeof given === 'string' ? given : nextId();
                },
              },
            },
      ),
    ],
  })
  class WithPino {}
  const adapter = existing ? adapterWith(ours, root) : new FastifyAdapter({});
  const app = await NestFactory.create<NestFastifyApplication>(WithPino, adapter, { bufferLogs: true });
  app.useLogger(app.get(np.Logger));
  echoIds(adapter);
  return app;
}

interface OnRequestHooks {
  addHook(name: 'onRequest', hook: (req: { id: string }, reply: { header(k: string, v: string): unknown }, done: () => void) => void): unknown;
}

/** The request id echo, as the service's onRequest hook does it (common/shutdown-gate.ts). */
function echoIds(adapter: { getInstance(): OnRequestHooks }): void {
  adapter.getInstance().addHook('onRequest', (request, reply, done) => {
    ours.echoRequestId(request, reply);
    done();
  });
}

async function worker(variant: string, requests: number): Promise<void> {
  const app = await build(variant);
  await app.init();
  const fastify = app.getHttpAdapter().getInstance();
  const once = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const res = await fastify.inject({ method: 'GET', url: '/x' });
      if (res.statusCode !== 200 || (variant !== 'none' && res.headers['x-request-id'] === undefined)) {
        throw new Error(`${variant}: ${res.statusCode} ${String(res.headers['x-request-id'])}`);
      }
    }
  };
  await once(requests);
  const t0 = process.cpuUsage();
  await once(requests);
  const t = process.cpuUsage(t0);
  console.log(JSON.stringify({ variant, usPerReq: (t.user + t.system) / requests }));
  await app.close();
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 5);
  const requests = Number(process.argv[3] ?? 30_000);
  const variants = [...VARIANTS, ...(process.env.BASE_LOGGING ? ['base'] : [])];
  const runs = new Map<string, number[]>(variants.map((v) => [v, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      const out = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', __filename, '--worker', v, String(requests)], {
        encoding: 'utf8',
      });
      const line = out.stdout.trim().split('\n').pop() ?? '';
      if (out.status !== 0 || !line.startsWith('{')) {
        throw new Error(`${v}: ${out.stderr.slice(-2000)}`);
      }
      runs.get(v)?.push((JSON.parse(line) as { usPerReq: number }).usPerReq);
    }
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const floor = med(runs.get('none') ?? []);
  for (const [v, xs] of runs) {
    console.log(
      `${v.padEnd(22)} ${med(xs).toFixed(2)} µs/req (+${(med(xs) - floor).toFixed(2)} over none)  runs ${xs.map((x) => x.toFixed(2)).join(' ')}`,
    );
  }
}

if (process.argv[2] === '--worker') {
  worker(process.argv[3], Number(process.argv[4])).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main();
}
