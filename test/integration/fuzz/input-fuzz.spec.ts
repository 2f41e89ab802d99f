import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ADMIN_TOKEN, TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import {
  BAD_JSON_BODIES,
  BAD_NUMBERS,
  BAD_PATTERNS,
  BAD_STRINGS,
  BAD_TIMES,
  CONTENT_TYPES,
  PATH_TRICKS,
  Rng,
  TOKENS,
} from './fuzz-inputs';

/**
 * Sends at least 10,000 generated malformed requests across every route (in-process through
 * Fastify's inject): no response may be a 5xx, every error must be JSON `{code, message}`, and
 * the app must still serve afterwards.
 */
const REQUESTS = 10_500;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

interface FuzzRequest {
  method: (typeof METHODS)[number];
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** Mostly percent-encoded, sometimes raw; a lone surrogate becomes its (invalid) UTF-8 bytes. */
function enc(rng: Rng, s: string): string {
  if (rng.next() >= 0.7) {
    return s;
  }
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
}

function generate(rng: Rng): FuzzRequest {
  const headers: Record<string, string> = {};
  const token = rng.pick(TOKENS);
  if (token !== null) {
    headers.authorization = token;
  }
  const body = (): string => {
    const type = rng.pick(CONTENT_TYPES);
    if (type !== undefined) {
      headers['content-type'] = type;
    }
    return rng.pick(BAD_JSON_BODIES);
  };
  const badId = (): string => enc(rng, rng.pick(BAD_NUMBERS));
  switch (rng.int(12)) {
    case 0: {
      const q = [`gatePass=${enc(rng, rng.pick(BAD_STRINGS))}`];
      if (rng.next() < 0.7) {
        q.push(`count=${enc(rng, rng.pick(BAD_NUMBERS))}`);
      }
      return { method: 'GET', url: `/api/id/${rng.next() < 0.5 ? '1' : badId()}?${q.join('&')}`, headers };
    }
    case 1:
      return { method: 'GET', url: `/api/id/${badId()}?gatePass=alice&count=${badId()}`, headers };
    case 2:
      return { method: 'GET', url: `/api/snowflake/get/${enc(rng, rng.pick(BAD_STRINGS))}?count=${badId()}`, headers };
    case 3:
      return { method: 'GET', url: `/api/snowflake/decode/${badId()}`, headers };
    case 4:
      return { method: 'GET', url: `/api/segment/get/${enc(rng, rng.pick(BAD_STRINGS))}?count=${badId()}`, headers };
    case 5: {
      // Admin writes: malformed bodies (with any token, the valid one included).
      if (rng.next() < 0.5) {
        headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      }
      const target = rng.pick(['/admin/apps', `/admin/apps/${badId()}`, '/admin/segment/tags', `/admin/segment/tags/${enc(rng, rng.pick(BAD_STRINGS))}`]);
      const method = target.endsWith('apps') || target.endsWith('tags') ? 'POST' : 'PATCH';
      return { method, url: target, headers, payload: body() };
    }
    case 6: {
      // Admin reads and actions with malformed ids, valid token or not.
      if (rng.next() < 0.5) {
        headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      }
      const id = badId();
      const [method, url] = rng.pick([
        ['GET', `/admin/apps/${id}`],
        ['DELETE', `/admin/apps/${id}`],
        ['POST', `/admin/apps/${id}/refill`],
        ['GET', `/admin/segment/tags/${enc(rng, rng.pick(BAD_STRINGS))}`],
        ['DELETE', `/admin/segment/tags/${enc(rng, rng.pick(BAD_STRINGS))}`],
      ] as const);
      return { method, url, headers };
    }
    case 7: {
      // Admin routes with bad tokens only: always refused.
      headers.authorization = rng.pick(TOKENS.filter((t): t is string => t !== null));
      const url = rng.pick(['/admin/apps', '/admin/apps/1', '/admin/apps/1/refill', '/admin/segment/tags', '/admin/segment/cache', '/admin/segment/db', '/admin/snowflake']);
      const method = rng.pick(METHODS);
      return { method, url, headers, payload: method === 'POST' || method === 'PATCH' ? body() : undefined };
    }
    case 8: {
      // Lease routes: bad appIds, gatePasses, keys and counts, with any method.
      const method = rng.next() < 0.8 ? 'POST' : rng.pick(METHODS);
      const count = rng.next() < 0.8 ? `count=${badId()}` : '';
      const url =
        rng.next() < 0.5
          ? `/api/id/${rng.next() < 0.5 ? '1' : badId()}/lease?gatePass=${enc(rng, rng.pick(BAD_STRINGS))}&${count}`
          : `/api/segment/lease/${enc(rng, rng.pick(BAD_STRINGS))}?${count}`;
      return { method, url, headers, payload: rng.next() < 0.2 ? body() : undefined };
    }
    case 9: {
      // Number formats: the route, and the admin API with malformed keys and bodies.
      if (rng.next() < 0.5) {
        headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      }
      const key = enc(rng, rng.pick([...BAD_STRINGS, 'ord']));
      const [method, url, withBody] = rng.pick([
        ['GET', `/api/number/${key}?count=${badId()}`, false],
        ['GET', `/api/number/${key}`, false],
        ['POST', '/admin/numbers', true],
        ['GET', `/admin/numbers/${key}`, false],
        ['PATCH', `/admin/numbers/${key}`, true],
        ['DELETE', `/admin/numbers/${key}`, false],
      ] as const);
      const payload = withBody
        ? rng.next() < 0.5
          ? body()
          : JSON.stringify({ key: rng.pick(['x', '', 'a b']), pattern: rng.pick(BAD_PATTERNS), reset: rng.pick(['daily', 'x', 1]) })
        : undefined;
      if (withBody && payload !== undefined && headers['content-type'] === undefined) {
        headers['content-type'] = 'application/json';
      }
      return { method, url, headers, payload };
    }
    case 10: {
      // The allocation history: decode and "ID at time" with malformed IDs, tags and times.
      const [url] = rng.pick([
        [`/api/id/decode/${badId()}`],
        [`/api/id/${rng.next() < 0.5 ? '1' : badId()}/at?time=${enc(rng, rng.pick(BAD_TIMES))}&shard=${badId()}`],
        [`/api/id/1/at?time=${enc(rng, rng.pick(BAD_TIMES))}&gatePass=${enc(rng, rng.pick(BAD_STRINGS))}`],
        [`/api/segment/decode/${enc(rng, rng.pick(BAD_STRINGS))}/${badId()}`],
        [`/api/segment/at/${enc(rng, rng.pick(BAD_STRINGS))}?time=${enc(rng, rng.pick(BAD_TIMES))}`],
      ] as const);
      return { method: rng.next() < 0.9 ? 'GET' : rng.pick(METHODS), url, headers };
    }
    default: {
      const method = rng.pick(METHODS);
      const url = rng.pick([...PATH_TRICKS, '/', '/?x=%zz', '/health/live', '/health/ready', '/metrics', '/dashboard', '/api/snowflake/time']);
      return { method, url, headers, payload: rng.next() < 0.3 ? body() : undefined };
    }
  }
}

describe('input fuzzing', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('fuzz');
    app = await startApp(env.config({ SNOWFLAKE_MODE: 'off' }));
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 1, appName: 'fuzz', step: 1000 } })).status).toBe(201);
    expect((await request(app, 'POST', '/admin/numbers', { body: { key: 'ord', pattern: 'ORD{yyyyMMdd}{seq:6}', reset: 'daily' } })).status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it(`answers ${REQUESTS} malformed requests without a 5xx and keeps serving`, async () => {
    const rng = new Rng(20261122);
    const fastify = app.getHttpAdapter().getInstance();
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let sent = 0;
    let notSendable = 0;
    while (sent < REQUESTS) {
      const req = generate(rng);
      let res;
      try {
        res = await fastify.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload });
      } catch {
        // The HTTP client itself refused to build it (e.g. a NUL in a header): nothing was sent.
        notSendable++;
        if (notSendable > REQUESTS) {
          throw new Error('the generator produces unsendable requests only');
        }
        continue;
      }
      sent++;
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const describe = `${req.method} ${req.url.slice(0, 120)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
      if (res.statusCode >= 500) {
        failures.push(describe);
      } else if (res.statusCode >= 400 && req.method !== 'HEAD') {
        const body = safeJson(res.body);
        if (!String(res.headers['content-type']).includes('application/json') || typeof body?.code !== 'number' || typeof body.message !== 'string') {
          failures.push(`not a JSON {code, message} error: ${describe}`);
        }
      }
    }
    const summary = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ');
    console.log(`[fuzz] ${sent} malformed requests (${notSendable} unsendable skipped): ${summary}; ${failures.length} failures`);
    expect(failures.slice(0, 10)).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(10_000);
    // Still alive and serving (app 1 may have been deleted by a fuzzed `DELETE /admin/apps/01`).
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 2, appName: 'after-fuzz' } })).status).toBe(201);
    const ok = await request(app, 'GET', '/api/id/2?gatePass=alice&count=3');
    expect(ok.status).toBe(200);
    expect(ok.json<{ ids: string[] }>().ids).toHaveLength(3);
  }, 300_000);
});

function safeJson(body: string): { code?: unknown; message?: unknown } | null {
  try {
    return JSON.parse(body) as { code?: unknown; message?: unknown };
  } catch {
    return null;
  }
}
