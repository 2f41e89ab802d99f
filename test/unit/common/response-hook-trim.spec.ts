import { FastifyAdapter } from '@nestjs/platform-fastify';
import { trimForwardingResponseHook } from '../../../src/common/response-hook-trim';

/** 'finish' listeners on the reply while the handler runs, on an adapter trimmed or not. */
async function finishListeners(trim: boolean): Promise<number> {
  const adapter = new FastifyAdapter();
  if (trim) {
    trimForwardingResponseHook(adapter);
  }
  const fastify = adapter.getInstance();
  let count = -1;
  fastify.get('/x', (_request, reply) => {
    count = reply.raw.listenerCount('finish');
    return 'ok';
  });
  await fastify.ready();
  const res = await fastify.inject({ url: '/x' });
  expect(res.body).toBe('ok');
  await fastify.close();
  return count;
}

describe("trimForwardingResponseHook: Nest's no-op onResponse hook", () => {
  it('is removed, and with it the listeners Fastify puts on every response', async () => {
    const untrimmed = await finishListeners(false);
    const trimmed = await finishListeners(true);
    expect(trimmed).toBe(untrimmed - 1);
  });

  it('still lets hooks added afterwards run', async () => {
    const adapter = new FastifyAdapter();
    trimForwardingResponseHook(adapter);
    const fastify = adapter.getInstance();
    const seen: string[] = [];
    fastify.addHook('onResponse', (request, _reply, done) => {
      seen.push(request.url);
      done();
    });
    fastify.get('/y', () => 'ok');
    await fastify.ready();
    await fastify.inject({ url: '/y' });
    expect(seen).toEqual(['/y']);
    await fastify.close();
  });

  it('refuses setOnResponseHook afterwards (it would do nothing)', () => {
    const adapter = new FastifyAdapter();
    trimForwardingResponseHook(adapter);
    expect(() => adapter.setOnResponseHook(() => undefined)).toThrow(/removed at start/);
  });

  it('fails the start, naming what it found, when the hooks are not what Nest registers', async () => {
    const adapter = new FastifyAdapter();
    const fastify = adapter.getInstance();
    // A hook queued before the trim runs: not the one Nest's constructor adds alone.
    fastify.addHook('onResponse', (_request, _reply, done) => done());
    trimForwardingResponseHook(adapter);
    await expect(fastify.ready()).rejects.toThrow(/expected Nest's one forwarding onResponse hook, found 2/);
  });
});
