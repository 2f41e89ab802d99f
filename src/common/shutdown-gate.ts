import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { echoRequestId } from '../logging/pino-logger';
import { sendError } from './error.filter';
import { ErrorKind, IdGenError } from './id-gen.error';

/**
 * Graceful shutdown (SIGTERM → app.close()): once the HTTP server starts closing, requests that
 * still arrive on kept-alive connections get a JSON 503 SHUTTING_DOWN (instead of Fastify's own
 * body), requests already in flight finish normally, and every response from then on carries
 * `connection: close`: otherwise a connection that goes idle after the close began stays open
 * until the keep-alive timeout (65 s) and the process does not exit.
 *
 * Its `onRequest` hook is the app's one: it also echoes the request id (logging/pino-logger.ts),
 * first, so the refusal carries it too. Every hook is a call and a callback on every request of
 * the hottest route (docs/performance.md): one hook where two did the same job.
 */
export function installShutdownGate(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) {
      void reply.header('connection', 'close');
    }
    done(null, payload);
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    echoRequestId(request, reply);
    if (!closing) {
      done();
      return;
    }
    void sendError(
      reply.header('connection', 'close'),
      new IdGenError(ErrorKind.ShuttingDown, 'this instance is shutting down; retry on another one'),
    );
  });
}
