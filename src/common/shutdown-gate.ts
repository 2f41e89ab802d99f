import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { echoRequestId } from '../logging/pino-logger';
import { appHooksOf } from './app-hooks';
import { ErrorKind, IdGenError } from './id-gen.error';

/**
 * Graceful shutdown (SIGTERM → app.close()): once the HTTP server starts closing, requests that
 * still arrive on kept-alive connections get a JSON 503 SHUTTING_DOWN (instead of Fastify's own
 * body), requests already in flight finish normally, and every response from then on carries
 * `connection: close`: otherwise a connection that goes idle after the close began stays open
 * until the keep-alive timeout (65 s) and the process does not exit.
 *
 * Its check is the app's first (common/app-hooks.ts): it also echoes the request id
 * (logging/pino-logger.ts), first, so the refusal carries it too.
 */
export function installShutdownGate(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const hooks = appHooksOf(fastify);
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  hooks.addCheck((request, reply) => {
    echoRequestId(request, reply);
    if (!closing) {
      return undefined;
    }
    void reply.header('connection', 'close');
    return new IdGenError(ErrorKind.ShuttingDown, 'this instance is shutting down; retry on another one');
  });
  hooks.addNote((_request, reply) => {
    if (closing) {
      void reply.header('connection', 'close');
    }
  });
}
