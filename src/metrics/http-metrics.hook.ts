import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';

/** ID routes and the generator each serves (the route pattern, as Fastify knows it). */
const ID_ROUTES: Record<string, string> = {
  '/api/id/:appId': 'queue',
  '/api/segment/get/:key': 'segment',
  '/api/snowflake/get/:key': 'snowflake',
};

const ERROR_KIND = /"error":"([A-Z_]{1,64})"/;

export interface HttpCounters {
  requests: Counter<'method' | 'route' | 'status'>;
  errors: Counter<'route' | 'status' | 'error'>;
  idsIssued: Counter<'generator'>;
}

/**
 * One onSend hook: counts every reply by route pattern and status, errors by their `error` kind,
 * and IDs issued by generator. No logging, no allocation beyond prom-client's label lookup.
 */
export function installHttpMetrics(fastify: FastifyInstance, counters: HttpCounters): void {
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    counters.requests.inc({ method: request.method, route, status });
    if (status >= 400) {
      const kind = typeof payload === 'string' ? ERROR_KIND.exec(payload)?.[1] : undefined;
      counters.errors.inc({ route, status, error: kind ?? 'UNKNOWN' });
    } else if (status === 200) {
      const generator = ID_ROUTES[route];
      if (generator !== undefined) {
        const count = (request.query as { count?: unknown }).count;
        counters.idsIssued.inc({ generator }, typeof count === 'string' ? Number(count) : 1);
      }
    }
    done(null, payload);
  });
}
