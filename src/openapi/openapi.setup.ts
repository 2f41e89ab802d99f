import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, OperationObject, SchemaObject, SwaggerModule } from '@nestjs/swagger';
import { errorSpec } from '../common/error-catalog';
import { ErrorKind } from '../common/id-gen.error';
import { NUMBERS_CONFIG, QUEUE_CONFIG, QueueConfig, SEGMENT_CONFIG, SegmentConfig, SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { NumbersConfig } from '../config/numbers-config';
import { SnowflakeConfig } from '../config/snowflake-config';
import { MAX_STEP } from '../segment/core/step-policy';
import { layoutNamed } from '../snowflake/core/snowflake-layout';
import { ROUTE_ERRORS } from './route-errors';
import { RouteDoc, routeDocs } from './route-docs';
import { ERROR, ID_BATCH, ref } from './schemas/common';
import { NUMBER_SCHEMAS, numberBodySchemas } from './schemas/numbers';
import { operationsSchemas } from './schemas/operations';
import { QUEUE_SCHEMAS, queueBodySchemas } from './schemas/queue';
import { SEGMENT_SCHEMAS, segmentBodySchemas } from './schemas/segment';

/**
 * What any route may answer besides its own errors: another method on its path, a bug, and the
 * shutdown gate's 503 for a request that arrives while the instance stops.
 */
const ALWAYS = [ErrorKind.MethodNotAllowed, ErrorKind.Internal, ErrorKind.ShuttingDown];
const METHODS = ['get', 'post', 'patch', 'delete', 'put'] as const;

/**
 * Builds the document from the controllers, then gives every route its parameters with their
 * ranges, its body, its success responses (route-docs.ts) and its errors (route-errors.ts).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const queue = app.get<QueueConfig>(QUEUE_CONFIG);
  const segment = app.get<SegmentConfig>(SEGMENT_CONFIG);
  const snowflake = app.get<SnowflakeConfig>(SNOWFLAKE_CONFIG);
  const numbers = app.get<NumbersConfig>(NUMBERS_CONFIG);
  const builder = new DocumentBuilder()
    .setTitle('shardleaf')
    .setDescription(
      'Distributed 64-bit IDs: queue IDs, Leaf segment and Leaf snowflake, and formatted business numbers. IDs are decimal strings. ' +
        'Every error is JSON {code, error, message}.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, only when it is set' }, 'metrics')
    .build();
  const document = SwaggerModule.createDocument(app, builder);
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      Error: ERROR,
      IdBatch: ID_BATCH,
      ...QUEUE_SCHEMAS,
      ...queueBodySchemas(queue.maxStep),
      ...SEGMENT_SCHEMAS,
      ...segmentBodySchemas(segment.keyMaxLength, Math.max(MAX_STEP, segment.maxStep)),
      ...NUMBER_SCHEMAS,
      ...numberBodySchemas(),
      ...operationsSchemas(layoutNamed(snowflake.layout)),
    },
  };
  const docs = routeDocs({ queue, segment, snowflake, numbers });
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) {
        continue;
      }
      const key = `${method.toUpperCase()} ${path}`;
      const doc = docs[key];
      if (doc !== undefined) {
        describe(operation, doc);
      }
      if (path.startsWith('/admin/')) {
        operation.security = [{ admin: [] }];
      } else if (path === '/metrics') {
        // Open unless METRICS_TOKEN is set.
        operation.security = [{}, { metrics: [] }];
      }
      for (const [status, names] of byStatus([...(ROUTE_ERRORS[key] ?? []), ...ALWAYS])) {
        addError(operation, status, names);
      }
    }
  }
  return document;
}

/** Parameters, body and success responses of `doc` on the operation (Nest's own guesses replaced). */
function describe(operation: OperationObject, doc: RouteDoc): void {
  operation.summary ??= doc.summary;
  if (doc.description !== undefined) {
    operation.description ??= doc.description;
  }
  operation.parameters = [
    ...(doc.path ?? []).map((p) => ({ name: p.name, in: 'path' as const, required: true, description: p.description, schema: p.schema })),
    ...(doc.query ?? []).map((p) => ({ name: p.name, in: 'query' as const, required: p.required === true, description: p.description, schema: p.schema })),
  ];
  if (doc.body !== undefined) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: ref(doc.body) } } };
  }
  operation.responses = {};
  for (const [status, content] of Object.entries(doc.ok)) {
    operation.responses[status] = {
      description: Number(status) < 300 ? 'success' : 'see the body',
      content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])),
    };
  }
}

/** An error status: the Error schema, beside a success body the route already answers with it (readiness' 503). */
function addError(operation: OperationObject, status: string, names: string[]): void {
  const existing = operation.responses[status] as { description: string; content?: Record<string, { schema: SchemaObject }> } | undefined;
  const own = existing?.content?.['application/json']?.schema;
  if (existing === undefined || own === undefined) {
    operation.responses[status] = { description: names.join(', '), content: { 'application/json': { schema: ref('Error') } } };
    return;
  }
  existing.description = `${existing.description}; or an error: ${names.join(', ')}`;
  existing.content = { ...existing.content, 'application/json': { schema: { oneOf: [own, ref('Error')] } } };
}

function byStatus(kinds: ErrorKind[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const kind of new Set(kinds)) {
    const { status, code } = errorSpec(kind);
    const list = out.get(String(status)) ?? [];
    list.push(`${kind} (${code})`);
    out.set(String(status), list);
  }
  return out;
}

/** Serves the JSON document at /docs-json (the UI at /docs is OpenApiUiController). */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    swaggerUiEnabled: false,
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
  });
}
