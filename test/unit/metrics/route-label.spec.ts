import Fastify, { FastifyRequest } from 'fastify';
import { RoutedRequest, routeLabels } from '../../../src/metrics/route-label';

/** A Fastify app whose requests count their routeOptions reads; each reply is the label routeLabels gives. */
async function countingApp() {
  const app = Fastify();
  const labelOf = routeLabels();
  let reads = 0;
  app.addHook('onRequest', (request, _reply, done) => {
    const proto = Object.getPrototypeOf(request) as object;
    const getter = findGetter(proto, 'routeOptions');
    Object.defineProperty(request, 'routeOptions', {
      get() {
        reads++;
        return getter.call(request);
      },
    });
    done();
  });
  app.addHook('onSend', (request, reply, _payload, done) => {
    done(null, `${labelOf(request)}|${(request as FastifyRequest).routeOptions.url ?? 'none'}`);
  });
  app.get('/api/id/:appId', async () => 'x');
  app.get('/api/segment/get/:key', async () => 'x');
  await app.ready();
  return { app, reads: () => reads };
}

function findGetter(proto: object | null, name: string): () => unknown {
  for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    if (d?.get) {
      return d.get;
    }
  }
  throw new Error(`no getter ${name}`);
}

describe('route label', () => {
  it("gives routeOptions.url (or 'unmatched'), and after the first matched request reads no routeOptions", async () => {
    const { app, reads } = await countingApp();
    const label = async (url: string): Promise<string> => (await app.inject({ url })).body.split('|')[0];
    expect(await label('/nowhere')).toBe('unmatched');
    expect(await label('/api/id/1')).toBe('/api/id/:appId');
    // Each inject above read routeOptions once in the label and once in the check of the reply.
    const before = reads();
    expect(await label('/api/segment/get/k')).toBe('/api/segment/get/:key');
    expect(await label('/nowhere/else')).toBe('unmatched');
    expect(await label('/api/id/2?gatePass=a')).toBe('/api/id/:appId');
    // Three more requests: only the reply's own check read it (once each), not the label.
    expect(reads() - before).toBe(3);
    await app.close();
  });

  it('reads routeOptions on every request when the route context is not where it was', () => {
    let reads = 0;
    const request = (url: string | undefined, contextUrl?: string): RoutedRequest => {
      const r: Record<string | symbol, unknown> = {};
      if (contextUrl !== undefined) {
        r[Symbol('fastify.context')] = { config: { url: contextUrl } };
      }
      Object.defineProperty(r, 'routeOptions', {
        get: () => {
          reads++;
          return { url };
        },
      });
      return r as unknown as RoutedRequest;
    };
    const noSymbol = routeLabels();
    expect(noSymbol(request('/a'))).toBe('/a');
    expect(noSymbol(request('/b'))).toBe('/b');
    expect(noSymbol(request(undefined))).toBe('unmatched');
    expect(reads).toBe(3);
    reads = 0;
    // A context whose url differs from routeOptions' on the first matched request: never trusted.
    const moved = routeLabels();
    expect(moved(request('/a', '/elsewhere'))).toBe('/a');
    expect(moved(request('/b', '/elsewhere'))).toBe('/b');
    expect(reads).toBe(2);
  });
});
