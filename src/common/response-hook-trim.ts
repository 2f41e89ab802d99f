import type { FastifyAdapter } from '@nestjs/platform-fastify';

/** Fastify's own lifecycle hooks of an instance, as it keeps them (lib/hooks.js). */
interface HookLists {
  onResponse: Array<(...args: unknown[]) => unknown>;
}

/**
 * Removes the one `onResponse` hook Nest's FastifyAdapter registers in its constructor, which only
 * forwards to a hook given to `adapter.setOnResponseHook()`: Nest never sets one and this service
 * does not either. While any `onResponse` hook is registered (or Fastify has a logger), Fastify
 * adds a 'finish' and an 'error' listener to every response, takes two clock readings and runs
 * the hook chain after it, for this no-op: a queue-ID request's CPU, measured (docs/performance.md,
 * "Fastify's response listeners").
 *
 * Fastify has no API to remove a hook, so this reaches its hook list through its symbol. What is
 * removed is checked, not assumed: exactly one `onResponse` hook there, forwarding to
 * `onResponseHook`. If a Nest or Fastify release registers anything else, the start fails here
 * with a message that says what was found, instead of dropping an unknown hook.
 * `setOnResponseHook` is refused afterwards (it would have no effect). Call right after the
 * adapter is built, before anything else adds hooks.
 */
export function trimForwardingResponseHook(adapter: FastifyAdapter): void {
  const fastify = adapter.getInstance();
  const hooks = hookListsOf(fastify);
  // Fastify adds hooks when its plugin queue reaches them: the adapter's are queued already. The
  // two-argument form, so that a refusal fails the start (a throw would only stall it).
  const after = fastify.after.bind(fastify) as unknown as (listener: (err: Error | null, done: (err?: Error) => void) => void) => unknown;
  after((err, done) => {
    const found = hooks.onResponse;
    if (err === null && (found.length !== 1 || !String(found[0]).includes('onResponseHook'))) {
      done(
        new Error(
          `trimForwardingResponseHook: expected Nest's one forwarding onResponse hook, found ${found.length} ` +
            `(${found.map((h) => String(h).slice(0, 60)).join(' | ')}): this Nest or Fastify version registers hooks differently`,
        ),
      );
      return;
    }
    if (err === null) {
      found.length = 0;
    }
    done(err ?? undefined);
  });
  adapter.setOnResponseHook = () => {
    throw new Error('setOnResponseHook: its forwarding hook was removed at start (common/response-hook-trim.ts)');
  };
}

function hookListsOf(fastify: object): HookLists {
  const symbol = Object.getOwnPropertySymbols(fastify).find((s) => s.description === 'fastify.hooks');
  const hooks = symbol === undefined ? undefined : (fastify as Record<symbol, unknown>)[symbol];
  if (typeof hooks !== 'object' || hooks === null || !Array.isArray((hooks as HookLists).onResponse)) {
    throw new Error("trimForwardingResponseHook: cannot find Fastify's hook lists (Symbol(fastify.hooks)) in this Fastify version");
  }
  return hooks as HookLists;
}
