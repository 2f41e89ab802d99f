import { InjectResult } from '../../support/test-env';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Call = (method: Method, url: string, options?: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> }) => Promise<InjectResult>;

/**
 * Requests to every route of the service, successes and the errors each can answer on a single
 * instance (bad input, unknown app or tag, conflicts, exhausted shard, auth, body limits): the
 * responses the OpenAPI contract test checks. In order: later requests use what earlier ones made.
 */
export async function exerciseEveryRoute(call: Call, sql: (query: string) => Promise<unknown>): Promise<void> {
    // Queue IDs: an app, its IDs, lease, admin, and the errors on the way.
    expect((await call('POST', '/admin/apps', { body: { appId: 3, appName: 'contract', step: 100 } })).status).toBe(201);
    expect((await call('POST', '/admin/apps', { body: { appId: 3, appName: 'contract', step: 100 } })).status).toBe(200);
    expect((await call('POST', '/admin/apps', { body: { appId: 3, appName: 'contract', step: 200 } })).status).toBe(409);
    // One index per shard: the second ID of a shard is past the limit.
    expect((await call('POST', '/admin/apps', { body: { appId: 5, appName: 'tiny', step: 1, maxLimitId: String((1 << 14) | (63 << 8) | 5) } })).status).toBe(201);
    expect((await call('POST', '/admin/apps', { body: { appId: 1, appName: 'x', nope: 1 } })).status).toBe(400);
    expect((await call('POST', '/admin/apps', { rawBody: '<app/>', headers: { 'content-type': 'application/xml' } })).status).toBe(415);
    expect((await call('POST', '/admin/apps', { body: { appId: 1, appName: 'x'.repeat(70_000) } })).status).toBe(413);
    expect((await call('GET', '/admin/apps', { token: 'wrong-token-123' })).status).toBe(401);
    const queueId = await call('GET', '/api/id/3?gatePass=alice');
    expect(queueId.status).toBe(200);
    expect((await call('GET', '/api/id/3?gatePass=alice&count=3')).status).toBe(200);
    expect((await call('GET', '/api/id/5?gatePass=alice')).status).toBe(200);
    expect((await call('GET', '/api/id/5?gatePass=alice')).status).toBe(410);
    expect((await call('GET', '/api/id/3')).status).toBe(400);
    expect((await call('GET', '/api/id/9?gatePass=alice')).status).toBe(404);
    expect((await call('POST', '/api/id/3/lease?gatePass=alice&count=50')).status).toBe(200);
    expect((await call('POST', '/api/id/3/lease?gatePass=alice')).status).toBe(400);
    expect((await call('POST', '/api/id/9/lease?gatePass=alice&count=5')).status).toBe(404);
    expect((await call('GET', '/admin/apps')).status).toBe(200);
    expect((await call('GET', '/admin/apps/3')).status).toBe(200);
    expect((await call('GET', '/admin/apps/9')).status).toBe(404);
    expect((await call('PATCH', '/admin/apps/3', { body: { step: 200, description: 'changed' } })).status).toBe(200);
    expect((await call('PATCH', '/admin/apps/3', { body: {} })).status).toBe(400);
    expect((await call('PATCH', '/admin/apps/9', { body: { step: 5 } })).status).toBe(404);
    expect((await call('POST', '/admin/apps/3/refill')).status).toBe(200);
    expect((await call('POST', '/admin/apps/9/refill')).status).toBe(404);

    // The time of a queue ID, and the first ID of a shard allocated at or after a time.
    const decoded = await call('GET', `/api/id/decode/${queueId.body}`);
    expect(decoded.status).toBe(200);
    const { shard, allocatedAt } = decoded.json<{ shard: number; allocatedAt: string | null }>();
    expect(allocatedAt).not.toBeNull();
    expect((await call('GET', '/api/id/decode/abc')).status).toBe(400);
    expect((await call('GET', '/api/id/decode/0')).status).toBe(400);
    expect((await call('GET', `/api/id/3/at?shard=${shard}&time=2020-01-01T00:00:00Z`)).status).toBe(200);
    expect((await call('GET', '/api/id/3/at?gatePass=alice&time=1577836800000')).status).toBe(200);
    expect((await call('GET', `/api/id/3/at?shard=${shard}&time=9999-01-01T00:00:00Z`)).status).toBe(404);
    expect((await call('GET', `/api/id/3/at?shard=${shard}`)).status).toBe(400);
    expect((await call('GET', '/api/id/3/at?shard=1&gatePass=alice&time=2020-01-01T00:00:00Z')).status).toBe(400);
    expect((await call('GET', '/api/id/3/at?time=yesterday&shard=1')).status).toBe(400);
    // Fits the documented pattern, but the date does not exist.
    expect((await call('GET', '/api/id/3/at?time=2026-02-30T00:00:00Z&shard=1')).status).toBe(400);

    expect((await call('DELETE', '/admin/apps/5')).status).toBe(200);
    expect((await call('DELETE', '/admin/apps/5')).status).toBe(404);

    // Segment IDs.
    expect((await call('POST', '/admin/segment/tags', { body: { tag: 'contract', step: 100, maxId: '1', description: 'api' } })).status).toBe(201);
    expect((await call('POST', '/admin/segment/tags', { body: { tag: 'contract', step: 100, description: 'api' } })).status).toBe(200);
    expect((await call('POST', '/admin/segment/tags', { body: { tag: 'contract', step: 5 } })).status).toBe(409);
    const segmentId = await call('GET', '/api/segment/get/contract');
    expect(segmentId.status).toBe(200);
    expect((await call('GET', '/api/segment/get/contract?count=5')).status).toBe(200);
    expect((await call('GET', '/api/segment/get/nope')).status).toBe(404);
    expect((await call('POST', '/api/segment/lease/contract?count=10')).status).toBe(200);
    expect((await call('POST', '/api/segment/lease/nope?count=10')).status).toBe(404);
    await sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('zero', 0, 10, 'made by hand')");
    expect((await call('POST', '/api/segment/lease/zero?count=1')).status).toBe(409);
    expect((await call('GET', '/admin/segment/tags')).status).toBe(200);
    expect((await call('GET', '/admin/segment/tags/contract')).status).toBe(200);
    expect((await call('GET', '/admin/segment/tags/nope')).status).toBe(404);
    expect((await call('PATCH', '/admin/segment/tags/contract', { body: { step: 50, description: null } })).status).toBe(200);
    expect((await call('GET', '/admin/segment/cache')).status).toBe(200);
    expect((await call('GET', '/admin/segment/db')).status).toBe(200);
    expect((await call('GET', `/api/segment/decode/contract/${segmentId.body}`)).status).toBe(200);
    expect((await call('GET', '/api/segment/decode/contract/-1')).status).toBe(400);
    expect((await call('GET', `/api/segment/decode/${'x'.repeat(300)}/1`)).status).toBe(400);
    expect((await call('GET', '/api/segment/at/contract?time=2020-01-01T00:00:00Z')).status).toBe(200);
    expect((await call('GET', '/api/segment/at/contract?time=9999-01-01T00:00:00Z')).status).toBe(404);
    expect((await call('GET', '/api/segment/at/contract')).status).toBe(400);
    expect((await call('DELETE', '/admin/segment/tags/contract')).status).toBe(200);
    expect((await call('DELETE', '/admin/segment/tags/contract')).status).toBe(404);

    // Snowflake IDs.
    const one = await call('GET', '/api/snowflake/get/order');
    expect(one.status).toBe(200);
    expect((await call('GET', '/api/snowflake/get/order?count=3')).status).toBe(200);
    expect((await call('GET', '/api/snowflake/get/bad%20key')).status).toBe(400);
    expect((await call('GET', `/api/snowflake/decode/${one.body}`)).status).toBe(200);
    expect((await call('GET', '/api/snowflake/decode/abc')).status).toBe(400);
    expect((await call('GET', '/api/snowflake/time')).status).toBe(200);
    expect((await call('GET', '/admin/snowflake')).status).toBe(200);

    // Formatted business numbers: formats, numbers, an exhausted period.
    const format = { key: 'contract', pattern: 'C{yyyyMMdd}{seq:4}', reset: 'daily' };
    expect((await call('POST', '/admin/numbers', { body: format })).status).toBe(201);
    expect((await call('POST', '/admin/numbers', { body: format })).status).toBe(200);
    expect((await call('POST', '/admin/numbers', { body: { ...format, reset: 'monthly' } })).status).toBe(409);
    expect((await call('POST', '/admin/numbers', { body: { key: 'bad', pattern: 'NO-SEQUENCE' } })).status).toBe(400);
    expect((await call('POST', '/admin/numbers', { body: { key: 'tiny', pattern: 'T{seq:1}', step: 5, description: 'nine numbers' } })).status).toBe(201);
    expect((await call('GET', '/api/number/contract')).status).toBe(200);
    expect((await call('GET', '/api/number/contract?count=3')).status).toBe(200);
    expect((await call('GET', '/api/number/tiny?count=9')).status).toBe(200);
    expect((await call('GET', '/api/number/tiny')).status).toBe(410);
    expect((await call('GET', '/api/number/nope')).status).toBe(404);
    expect((await call('GET', '/api/number/bad%20key')).status).toBe(400);
    expect((await call('GET', '/admin/numbers')).status).toBe(200);
    expect((await call('GET', '/admin/numbers/contract')).status).toBe(200);
    expect((await call('GET', '/admin/numbers/nope')).status).toBe(404);
    expect((await call('PATCH', '/admin/numbers/contract', { body: { step: 50, description: 'changed' } })).status).toBe(200);
    expect((await call('PATCH', '/admin/numbers/contract', { body: { pattern: 'X{seq:2}' } })).status).toBe(400);
    expect((await call('PATCH', '/admin/numbers/contract', { body: {} })).status).toBe(400);
    expect((await call('PATCH', '/admin/numbers/nope', { body: { step: 5 } })).status).toBe(404);
    expect((await call('DELETE', '/admin/numbers/tiny')).status).toBe(200);
    expect((await call('DELETE', '/admin/numbers/tiny')).status).toBe(404);
    // A pattern that can print another key's numbers: refused, unless the create opts in.
    const copy = { key: 'copy', pattern: 'C{seq:12}' };
    const overlap = await call('POST', '/admin/numbers', { body: copy });
    expect({ status: overlap.status, error: overlap.json<{ error: string }>().error }).toEqual({ status: 409, error: 'NUMBER_TEXT_OVERLAP' });
    expect((await call('POST', '/admin/numbers', { body: { ...copy, allowTextOverlap: true } })).status).toBe(201);
    expect((await call('POST', '/admin/numbers', { body: { ...copy, allowTextOverlap: 'yes' } })).status).toBe(400);
    expect((await call('POST', '/admin/numbers', { body: { key: 'b36', pattern: 'B36-{seq36:4}' } })).status).toBe(201);
    expect((await call('GET', '/api/number/b36?count=2')).status).toBe(200);
    expect((await call('GET', '/admin/numbers', { token: null })).status).toBe(401);

    // Operations.
    expect((await call('GET', '/')).status).toBe(200);
    expect((await call('GET', '/', { headers: { accept: 'text/html' } })).status).toBe(200);
    for (const url of ['/health/live', '/health/ready', '/metrics', '/dashboard', '/admin/dashboard/history']) {
      expect({ url, status: (await call('GET', url)).status }).toEqual({ url, status: 200 });
    }
    expect((await call('DELETE', '/health/live')).status).toBe(404);
}
