import type { FastifyAdapter } from '@nestjs/platform-fastify';

/**
 * The adapter runs without @fastify/middie (`skipMiddie`, bootstrap.ts: no request pays for its
 * hook, and the direct routes can take over theirs, docs/decisions/0039). Nest middleware would
 * then fail on a missing `use` with a message that does not say why: it is refused here instead,
 * at `app.use()` or when Nest registers a `configure(consumer)` middleware at init.
 */
export function refuseMiddleware(adapter: FastifyAdapter): void {
  const refuse = (): never => {
    throw new Error(
      'Nest middleware is not supported: the Fastify adapter runs without @fastify/middie (skipMiddie in bootstrap.ts, docs/decisions/0039-direct-routes-run-their-hooks.md)',
    );
  };
  adapter.use = refuse;
  adapter.createMiddlewareFactory = refuse;
}
