import SwaggerParser from '@apidevtools/swagger-parser';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorSpec } from '../../../src/common/error-catalog';
import { ROUTE_ERRORS } from '../../../src/openapi/route-errors';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

interface Operation {
  description?: string;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string; oneOf?: Array<{ $ref?: string }> } }> }>;
  security?: unknown[];
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

describe('OpenAPI document', () => {
  const suite = appSuite('openapi');
  let app: NestFastifyApplication;
  let doc: Document;

  beforeAll(async () => {
    app = await suite.start();
    const res = await request(app, 'GET', '/docs-json', { token: null });
    expect(res.status).toBe(200);
    doc = res.json<Document>();
  });

  it('is a valid OpenAPI 3 document', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('lists exactly the mapped routes, each one really served by Fastify', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(Object.keys(ROUTE_ERRORS).sort());
    const fastify = app.getHttpAdapter().getInstance();
    for (const operation of operations) {
      const [method, path] = operation.split(' ');
      const url = path.replace(/\{([^}]+)\}/g, ':$1');
      expect({ operation, mapped: fastify.hasRoute({ method, url }) }).toEqual({ operation, mapped: true });
    }
  });

  it('documents every error status of every route with the {code, error, message} schema', () => {
    for (const [operation, kinds] of Object.entries(ROUTE_ERRORS)) {
      const [method, path] = operation.split(' ');
      const op = doc.paths[path][method.toLowerCase()];
      for (const status of new Set([...kinds.map((k) => errorSpec(k).status), 405, 500, 503])) {
        const response = op.responses[String(status)];
        // The Error schema, or one of the schemas of a status the route also answers otherwise (readiness' 503).
        const schema = response?.content?.['application/json']?.schema;
        const refs = schema?.oneOf?.map((s) => s.$ref) ?? [schema?.$ref];
        expect({ operation, status, error: refs.includes('#/components/schemas/Error') }).toEqual({ operation, status, error: true });
      }
      if (path.startsWith('/admin/')) {
        expect(op.security).toEqual([{ admin: [] }]);
      }
    }
  });

  it('describes the snowflake layouts and leases, the app detail’s jsSafeMaxIndex and GET /', () => {
    expect(doc.paths['/api/snowflake/get/{key}'].get.description).toMatch(/js-safe.*2\^53.*SNOWFLAKE_LEASE_LOST.*redis/s);
    expect(doc.paths['/api/snowflake/decode/{id}'].get.description).toContain('SNOWFLAKE_LAYOUT');
    expect(doc.paths['/admin/snowflake'].get.description).toMatch(/layout.*redis/s);
    expect(doc.paths['/admin/apps/{appId}'].get.description).toContain('jsSafeMaxIndex');
    expect(doc.paths['/'].get.description).toContain('links');
  });

  it('serves the UI at /docs', async () => {
    const res = await request(app, 'GET', '/docs', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toContain('swagger');
    const bundle = await request(app, 'GET', '/docs/swagger-ui-bundle.js', { token: null });
    expect(bundle.status).toBe(200);
    expect(bundle.contentType).toContain('javascript');
    expect((await request(app, 'GET', '/docs/..%2Fpackage.json', { token: null })).status).toBe(404);
  });
});
