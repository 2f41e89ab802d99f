import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { sendError } from '../../../src/common/error.filter';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { installHttpMetrics } from '../../../src/metrics/http-metrics.hook';

/** The value of one sample line, e.g. `shardleaf_ids_issued_total{generator="queue"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function appWithMetrics() {
  const register = new Registry();
  const app = Fastify();
  const counters = installHttpMetrics(app, register);
  app.get('/api/id/:appId', async (request, reply) => {
    const { count } = request.query as { count?: string };
    const { appId } = request.params as { appId: string };
    if (appId === 'bad') {
      return sendError(reply, new IdGenError(ErrorKind.BadInput, 'appId must be an integer'));
    }
    if (appId === 'raw') {
      // An error status with a body in our shape, not sent by sendError: the body is not read.
      return reply.status(503).header('content-type', 'application/json; charset=utf-8').send('{"code":-1,"error":"QUEUE_EMPTY","message":"x"}');
    }
    return count === undefined ? '1' : { ids: Array.from({ length: Number(count) }, (_, i) => String(i)) };
  });
  app.get('/api/segment/get/:key', async () => '2');
  await app.ready();
  return { app, register, counters };
}

describe('HTTP metrics hook', () => {
  it('counts replies by method, route and status, errors by kind, IDs by generator', async () => {
    const { app, register } = await appWithMetrics();
    await app.inject({ url: '/api/id/1?gatePass=a' });
    await app.inject({ url: '/api/id/1?gatePass=a&count=5' });
    await app.inject({ url: '/api/id/bad?gatePass=a' });
    await app.inject({ url: '/api/segment/get/k' });
    await app.inject({ url: '/nowhere' });
    await app.inject({ url: '/api/id/raw?gatePass=a' });
    const text = await register.metrics();
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="/api/id/:appId",status="200"}')).toBe(2);
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="/api/id/:appId",status="400"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="/api/segment/get/:key",status="200"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/api/id/:appId",status="400",error="BAD_INPUT"}')).toBe(1);
    expect(sample(text, 'shardleaf_http_errors_total{route="/api/id/:appId",status="503",error="UNKNOWN"}')).toBe(1);
    expect(text).not.toContain('error="QUEUE_EMPTY"');
    expect(sample(text, 'shardleaf_ids_issued_total{generator="queue"}')).toBe(6);
    expect(sample(text, 'shardleaf_ids_issued_total{generator="segment"}')).toBe(1);
    // No series for a generator that issued nothing.
    expect(text).not.toContain('generator="snowflake"');
    await app.close();
  });

  it('gives the counts to a counter read directly (get), as on scrape', async () => {
    const { app, counters } = await appWithMetrics();
    await app.inject({ url: '/api/id/1?gatePass=a&count=3' });
    const ids = (await counters.idsIssued.get()).values;
    expect(ids).toEqual([{ labels: { generator: 'queue' }, value: 3 }]);
    await app.close();
  });

  it('reports the same totals on every scrape, and counts what came in between', async () => {
    const { app, register } = await appWithMetrics();
    await app.inject({ url: '/api/id/1?gatePass=a' });
    const first = await register.metrics();
    const again = await register.metrics();
    expect(sample(again, 'shardleaf_ids_issued_total{generator="queue"}')).toBe(1);
    expect(again).toBe(first);
    await app.inject({ url: '/api/id/1?gatePass=a' });
    const later = await register.metrics();
    expect(sample(later, 'shardleaf_ids_issued_total{generator="queue"}')).toBe(2);
    expect(sample(later, 'shardleaf_http_requests_total{method="GET",route="/api/id/:appId",status="200"}')).toBe(2);
    await app.close();
  });
});
