import { get } from 'node:http';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../../src/bootstrap';
import { REDIS, RedisClient } from '../../../src/infra/redis/redis.tokens';
import { appSuite } from '../../support/app-suite';
import { OpenApiDocument, OpenApiOperation, OpenApiValidator } from '../../support/openapi-validator';
import { pollUntil } from '../../support/poll';
import { Seen, docPath, recordResponses } from '../../support/response-recorder';
import { TcpProxy } from '../../support/tcp-proxy';
import { ADMIN_TOKEN, BOUNDS_AT_DEFAULTS, TEST_REDIS_URL, request } from '../../support/test-env';
import { Method, exerciseEveryRoute } from './api-scenarios';

/**
 * The API document against the real service: every route Nest serves is in /docs-json, and every
 * response the requests below get — successes and errors, from every route — has a status, a
 * content type and a body the document gives that route. Request bodies that succeed fit the
 * documented body schema, and each documented integer range is the one the service enforces.
 */

/** Routes served but deliberately not in the API document, with why. */
const NOT_DOCUMENTED: Record<string, string> = {
  'GET /docs': 'the Swagger UI page over the document',
  'GET /docs/{asset}': "the Swagger UI's script and style files",
  'GET /docs-json': 'the document itself',
  'GET /docs-yaml': 'the document itself',
};

/** A GET on a connection of its own, closed after the answer (no pooled socket outlives the test). */
function getOnce(url: string): Promise<{ status: number; body: string; requestId: unknown }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, requestId: res.headers['x-request-id'] }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** A request id the service made (logging/pino-logger.ts requestIds). */
const NEW_REQUEST_ID = /^[0-9a-z]{6}-[0-9a-z]{1,5}$/;

describe('the API document matches what the service answers', () => {
  const suite = appSuite('apicontract');
  const served = new Set<string>();
  const seen: Seen[] = [];
  let app: NestFastifyApplication;
  let doc: OpenApiDocument;
  let validator: OpenApiValidator;

  /**
   * Builds, records and starts an app on this suite's database; closed by the suite unless the
   * test closes it itself (`closedByTest`: an app is closed once).
   */
  async function start(
    overrides: Record<string, string>,
    before?: (app: NestFastifyApplication) => void,
    closedByTest = false,
  ): Promise<NestFastifyApplication> {
    const started = await createApp(suite.env.config(overrides));
    if (!closedByTest) {
      suite.defer(() => started.close());
    }
    recordResponses(started, seen);
    before?.(started);
    await started.init();
    await started.getHttpAdapter().getInstance().ready();
    return started;
  }

  const call = (method: Method, url: string, options: Parameters<typeof request>[3] = {}) => request(app, method, url, options);

  beforeAll(async () => {
    app = await start({}, (created) => {
      created.getHttpAdapter().getInstance().addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD') {
            served.add(`${method} ${docPath(route.url)}`);
          }
        }
      });
    });
    const res = await call('GET', '/docs-json', { token: null });
    expect(res.status).toBe(200);
    doc = res.json<OpenApiDocument>();
    validator = new OpenApiValidator(doc);
  });

  const operation = (key: string): OpenApiOperation | undefined => {
    const [method, path] = key.split(' ');
    return doc.paths[path]?.[method.toLowerCase()];
  };

  it('has every route the service serves, and no route it does not', () => {
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const missing = [...served].filter((key) => !documented.has(key) && NOT_DOCUMENTED[key] === undefined).sort();
    expect({ 'served but missing from /docs-json (document it: src/openapi/route-docs.ts and route-errors.ts)': missing }).toEqual({
      'served but missing from /docs-json (document it: src/openapi/route-docs.ts and route-errors.ts)': [],
    });
    const ghosts = [...documented].filter((key) => !served.has(key)).sort();
    expect({ 'in /docs-json but not served': ghosts }).toEqual({ 'in /docs-json but not served': [] });
  });

  it('documents every path parameter and the main route\'s gatePass and count, with their ranges', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
        const params = (op.parameters ?? []).filter((p) => p.in === 'path');
        expect({ route: `${method.toUpperCase()} ${path}`, params: params.map((p) => p.name).sort() }).toEqual({
          route: `${method.toUpperCase()} ${path}`,
          params: inPath,
        });
        for (const p of op.parameters ?? []) {
          expect({ route: `${method.toUpperCase()} ${path}`, param: p.name, typed: typeof p.schema?.type === 'string' }).toEqual({
            route: `${method.toUpperCase()} ${path}`,
            param: p.name,
            typed: true,
          });
        }
        if (method === 'post' || method === 'patch') {
          const hasBody = op.requestBody !== undefined;
          // Only the admin create and patch routes read a body.
          expect({ route: `${method.toUpperCase()} ${path}`, hasBody }).toEqual({
            route: `${method.toUpperCase()} ${path}`,
            hasBody: /^\/admin\/(apps|segment\/tags|numbers)(\/\{[^}]+\})?$/.test(path),
          });
        }
      }
    }
    const main = operation('GET /api/id/{appId}') as OpenApiOperation;
    expect(main.parameters).toEqual([
      expect.objectContaining({ name: 'appId', in: 'path', required: true, schema: { type: 'integer', minimum: 0, maximum: 255 } }),
      expect.objectContaining({ name: 'gatePass', in: 'query', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } }),
      expect.objectContaining({ name: 'count', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000 } }),
    ]);
    expect(Object.keys(main.responses['200'].content ?? {}).sort()).toEqual(['application/json', 'text/plain']);
    const notReplicated = JSON.stringify(main.responses['503']);
    expect(notReplicated).toContain('QUEUE_NOT_REPLICATED');
    expect(notReplicated).toContain('SHUTTING_DOWN');
    expect(Object.keys(operation('POST /admin/apps')?.responses ?? {})).toEqual(expect.arrayContaining(['200', '201', '409']));
    expect(Object.keys(operation('POST /admin/segment/tags')?.responses ?? {})).toEqual(expect.arrayContaining(['200', '201', '409']));
    expect(Object.keys(operation('POST /api/segment/lease/{key}')?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404', '409']));
  });

  it('answers every route as documented: successes and errors, bodies and content types', async () => {
    await exerciseEveryRoute(call, (sql) => suite.env.sql(sql));
  });

  it('echoes the request id on every reply of the real wiring: a success, an error, an unmatched route', async () => {
    const fastify = app.getHttpAdapter().getInstance();
    const given = await fastify.inject({ url: '/api/segment/get/no-such-tag', headers: { 'x-request-id': 'client-7.a' } });
    expect(given.statusCode).toBe(404);
    expect(given.headers['x-request-id']).toBe('client-7.a');
    const unmatched = await fastify.inject({ url: '/nowhere' });
    expect(unmatched.statusCode).toBe(404);
    expect(String(unmatched.headers['x-request-id'])).toMatch(NEW_REQUEST_ID);
    const ok = await fastify.inject({ url: '/api/snowflake/get/any' });
    expect(ok.statusCode).toBe(200);
    expect(String(ok.headers['x-request-id'])).toMatch(NEW_REQUEST_ID);
    expect(ok.headers['x-request-id']).not.toBe(unmatched.headers['x-request-id']);
  });

  it('answers QUEUE_NOT_REPLICATED as documented when no replica confirms a pop', async () => {
    // The shared Redis has no replica: WAIT 1 times out with 0.
    const waiting = await start({ REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '50' });
    const res = await request(waiting, 'GET', '/api/id/3?gatePass=alice');
    expect({ status: res.status, error: res.json<{ error: string }>().error }).toEqual({ status: 503, error: 'QUEUE_NOT_REPLICATED' });
  });

  it('answers SHUTTING_DOWN as documented to a request that arrives while the instance stops', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Closed by this test (below), not by the suite.
    const stopping = await start(
      {},
      (created) => {
        // Holds the close after the shutdown gate has turned on, so a request can arrive meanwhile.
        created.getHttpAdapter().getInstance().addHook('preClose', (done) => void held.then(() => done()));
      },
      true,
    );
    let closing: Promise<void> | undefined;
    try {
      await stopping.listen(0, '127.0.0.1');
      const base = (await stopping.getUrl()).replace('[::1]', '127.0.0.1');
      closing = stopping.close();
      const refused = await pollUntil('a SHUTTING_DOWN answer', async () => {
        const res = await getOnce(`${base}/api/id/3?gatePass=alice`);
        return res.status === 503 && res.body.includes('SHUTTING_DOWN') && res;
      }, { tolerateErrors: true });
      expect(JSON.parse(refused.body)).toMatchObject({ code: -110, error: 'SHUTTING_DOWN' });
      // The refusal comes from the hook that also echoes the request id (common/shutdown-gate.ts).
      expect(String(refused.requestId)).toMatch(NEW_REQUEST_ID);
    } finally {
      release();
      await (closing ?? stopping.close());
    }
  });

  it('documents the js-safe layout when it runs it: the decode range and the parts of an ID, and answers as it documents', async () => {
    const jsSafe = await start({ SNOWFLAKE_LAYOUT: 'js-safe' });
    const own = (await request(jsSafe, 'GET', '/docs-json', { token: null })).json<OpenApiDocument>();
    const ownValidator = new OpenApiValidator(own);
    const decode = own.paths['/api/snowflake/decode/{id}'].get;
    expect(decode.parameters?.[0]).toMatchObject({ name: 'id', schema: { type: 'string', pattern: '^[0-9]{1,16}$' } });
    expect(own.components.schemas.DecodedSnowflakeId).toMatchObject({ properties: { workerId: { maximum: 31 }, sequence: { maximum: 127 } } });
    const id = await request(jsSafe, 'GET', '/api/snowflake/get/order');
    expect({ status: id.status, belowTwoPow53: BigInt(id.body) < 1n << 53n }).toEqual({ status: 200, belowTwoPow53: true });
    const decoded = await request(jsSafe, 'GET', `/api/snowflake/decode/${id.body}`);
    expect(decoded.status).toBe(200);
    expect(ownValidator.problems(decode.responses['200'].content?.['application/json']?.schema ?? {}, decoded.json())).toEqual([]);
    const status = await request(jsSafe, 'GET', '/admin/snowflake');
    expect(status.json()).toMatchObject({ layout: 'js-safe', maxWorkerId: 31, bits: { time: 41, workerId: 5, sequence: 7 } });
    const statusSchema = own.paths['/admin/snowflake'].get.responses['200'].content?.['application/json']?.schema ?? {};
    expect(ownValidator.problems(statusSchema, status.json())).toEqual([]);
    // One past the layout's largest ID: the range the document gives is the one enforced.
    expect((await request(jsSafe, 'GET', `/api/snowflake/decode/${1n << 53n}`)).status).toBe(400);
  });

  it('refuses every admin route without a token: 401, as documented', async () => {
    const samples: Record<string, string> = { appId: '3', tag: 'contract', key: 'contract' };
    const routes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => [method.toUpperCase() as Method, path] as const));
    expect(routes.length).toBeGreaterThanOrEqual(19);
    const refused: string[] = [];
    for (const [method, path] of routes) {
      const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => samples[name] ?? 'x');
      const body = method === 'POST' || method === 'PATCH' ? {} : undefined;
      const res = await call(method, url, { token: null, body });
      refused.push(`${method} ${path}: ${res.status} ${res.status === 401 ? res.json<{ error: string }>().error : res.body.slice(0, 120)}`);
    }
    expect(refused).toEqual(routes.map(([method, path]) => `${method} ${path}: 401 UNAUTHORIZED`));
  });

  it('answers BACKEND_UNAVAILABLE as documented while Redis is cut away', async () => {
    const redis = new URL(TEST_REDIS_URL);
    const proxy = await TcpProxy.start(Number(redis.port || 6379), redis.hostname);
    // Deferred before the app: the suite closes the app first, then the proxy.
    suite.defer(() => proxy.close());
    redis.host = `127.0.0.1:${proxy.port}`;
    const cutOff = await start({ ...BOUNDS_AT_DEFAULTS, REDIS_URL: redis.toString() });
    proxy.cut();
    for (const url of ['/api/id/3?gatePass=alice', '/api/id/3?gatePass=alice&count=5']) {
      const res = await request(cutOff, 'GET', url);
      expect({ url, status: res.status, error: res.json<{ error: string }>().error }).toEqual({ url, status: 503, error: 'BACKEND_UNAVAILABLE' });
    }
    // Back before the suite closes the app: a client closed while reconnecting makes ioredis arm
    // its 2 s timer for a socket already gone (quit() disconnects it), which outlives the tests.
    proxy.restore();
    await pollUntil('the Redis client to reconnect', () => cutOff.get<RedisClient>(REDIS).status === 'ready', { timeoutMs: 20_000 });
  });

  it('enforces every documented integer range of a parameter: one past either end is a 400', async () => {
    const checked = new Set<string>();
    const problems: string[] = [];
    for (const s of seen.filter((x) => x.status < 300 && !x.operation.startsWith('DELETE'))) {
      const op = operation(s.operation);
      const [method, path] = s.operation.split(' ');
      const url = new URL(s.url, 'http://x');
      const pathValues = path.split('/');
      const actual = url.pathname.split('/');
      for (const p of op?.parameters ?? []) {
        const { minimum, maximum } = (p.schema ?? {}) as { minimum?: number; maximum?: number };
        if (p.schema?.type !== 'integer' || checked.has(`${s.operation} ${p.name}`)) {
          continue;
        }
        checked.add(`${s.operation} ${p.name}`);
        for (const bad of [minimum === undefined ? undefined : minimum - 1, maximum === undefined ? undefined : maximum + 1]) {
          if (bad === undefined || bad < 0) {
            continue;
          }
          const target = new URL(url.toString());
          if (p.in === 'path') {
            target.pathname = pathValues.map((seg, i) => (seg === `{${p.name}}` ? String(bad) : actual[i])).join('/');
          } else {
            target.searchParams.set(p.name, String(bad));
          }
          const res = await call(method as Method, target.pathname + target.search, s.requestBody === undefined ? {} : { body: s.requestBody });
          if (res.status !== 400) {
            problems.push(`${s.operation} ${p.name}=${bad}: answered ${res.status}, not 400 (${res.body.slice(0, 120)})`);
          }
        }
      }
    }
    expect(checked.size).toBeGreaterThanOrEqual(8);
    expect(problems).toEqual([]);
  });

  it('enforces every documented integer range of a body field: one past either end is a 400', async () => {
    const problems: string[] = [];
    const bodies: Array<[Method, string, Record<string, unknown>, string]> = [
      ['POST', '/admin/apps', { appId: 7, appName: 'ranges', step: 10 }, 'CreateAppBody'],
      ['PATCH', '/admin/apps/3', { step: 10 }, 'PatchAppBody'],
      ['POST', '/admin/segment/tags', { tag: 'ranges', step: 10 }, 'CreateTagBody'],
      ['PATCH', '/admin/segment/tags/ranges', { step: 10 }, 'PatchTagBody'],
      ['POST', '/admin/numbers', { key: 'ranges', pattern: 'R{seq:4}' }, 'CreateNumberFormatBody'],
      ['PATCH', '/admin/numbers/ranges', { step: 10 }, 'PatchNumberFormatBody'],
    ];
    for (const [method, url, body, schemaName] of bodies) {
      const schema = doc.components.schemas[schemaName] as { properties: Record<string, { type?: string; minimum?: number; maximum?: number }> };
      for (const [field, prop] of Object.entries(schema.properties)) {
        if (prop.type !== 'integer') {
          continue;
        }
        for (const bad of [(prop.minimum ?? 0) - 1, prop.maximum === undefined ? undefined : prop.maximum + 1]) {
          if (bad === undefined || (field !== 'appId' && bad < 0 && prop.minimum === 0)) {
            continue;
          }
          const res = await call(method, url, { body: { ...body, [field]: bad } });
          if (res.status !== 400) {
            problems.push(`${method} ${url} ${field}=${bad}: answered ${res.status}, not 400`);
          }
        }
      }
      // The valid body itself is accepted (the tag exists for the PATCH once the POST ran).
      const ok = await call(method, url, { body });
      if (ok.status >= 300) {
        problems.push(`${method} ${url} ${JSON.stringify(body)}: answered ${ok.status}: ${ok.body.slice(0, 120)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(ADMIN_TOKEN).toBeDefined();
  });
  it('every documented route was answered successfully at least once above', () => {
    const succeeded = new Set(seen.filter((s) => s.status < 300).map((s) => s.operation));
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect({ 'documented routes never answered 2xx by this test (add a request)': documented.filter((k) => !succeeded.has(k)) }).toEqual({
      'documented routes never answered 2xx by this test (add a request)': [],
    });
  });

  // The two checks below read what every test above recorded (`seen`): they run last, after the
  // range tests' 400s and the 401 and 503 answers, so every response of this file is validated.
  it('every response of the tests above fits the document: status, content type and body', () => {
    const problems: string[] = [];
    for (const s of seen) {
      if (NOT_DOCUMENTED[s.operation] !== undefined) {
        continue;
      }
      const op = operation(s.operation);
      if (op === undefined) {
        problems.push(`${s.operation}: not in the document (${s.url} answered ${s.status})`);
        continue;
      }
      const response = op.responses[String(s.status)];
      if (response === undefined) {
        problems.push(`${s.operation}: status ${s.status} is not documented (${s.url}: ${s.body.slice(0, 200)})`);
        continue;
      }
      const type = s.contentType.split(';')[0].trim();
      const schema = response.content?.[type]?.schema;
      if (schema === undefined) {
        problems.push(`${s.operation} ${s.status}: content type ${type} is not documented (${s.url})`);
        continue;
      }
      const value = type === 'application/json' ? JSON.parse(s.body) : s.body;
      for (const p of validator.problems(schema, value)) {
        problems.push(`${s.operation} ${s.status} ${s.url}: ${p} — body ${s.body.slice(0, 300)}`);
      }
      if (s.status < 300 && s.requestBody !== undefined && s.requestBody !== null && op.requestBody !== undefined) {
        for (const p of validator.problems(op.requestBody.content['application/json'].schema, s.requestBody)) {
          problems.push(`${s.operation} ${s.url}: the body it accepted does not fit its documented schema: ${p}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
