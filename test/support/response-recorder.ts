import { NestFastifyApplication } from '@nestjs/platform-fastify';

/** One request/response as Fastify saw it. */
export interface Seen {
  operation: string;
  url: string;
  status: number;
  contentType: string;
  body: string;
  requestBody: unknown;
}

/** `/api/id/:appId` → `/api/id/{appId}`. */
export function docPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const PAYLOAD = Symbol('payload');

/** Records every response with a route (its payload at onSend, its final headers at onResponse). */
export function recordResponses(app: NestFastifyApplication, seen: Seen[]): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onSend', (req, _reply, payload, done) => {
    (req as unknown as Record<symbol, unknown>)[PAYLOAD] = payload;
    done(null, payload);
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url;
    const payload = (req as unknown as Record<symbol, unknown>)[PAYLOAD];
    if (route !== undefined && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      seen.push({
        operation: `${req.method} ${docPath(route)}`,
        url: req.url,
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? ''),
        body: payload.toString(),
        requestBody: req.body,
      });
    }
    done();
  });
}

