import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { errorSpec } from '../common/error-catalog';
import { ErrorKind } from '../common/id-gen.error';
import { ROUTE_ERRORS } from './route-errors';

const ALWAYS = [ErrorKind.MethodNotAllowed, ErrorKind.Internal];

/** Builds the document from the controllers and adds every route's error responses. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('shardleaf')
    .setDescription(
      'Distributed 64-bit IDs: queue IDs, Leaf segment and Leaf snowflake. IDs are decimal strings. ' +
        'Every error is JSON {code, error, message}.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, only when it is set' }, 'metrics')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      Error: {
        type: 'object',
        required: ['code', 'error', 'message'],
        properties: {
          code: { type: 'integer', description: 'numeric error code (seed/Leaf codes where they exist)' },
          error: { type: 'string', enum: Object.values(ErrorKind) },
          message: { type: 'string' },
        },
      },
    },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'post', 'patch', 'delete', 'put'] as const) {
      const operation = item[method];
      if (!operation) {
        continue;
      }
      const kinds = [...(ROUTE_ERRORS[`${method.toUpperCase()} ${path}`] ?? []), ...ALWAYS];
      if (path.startsWith('/admin/')) {
        operation.security = [{ admin: [] }];
      } else if (path === '/metrics') {
        // Open unless METRICS_TOKEN is set.
        operation.security = [{}, { metrics: [] }];
      }
      for (const [status, names] of byStatus(kinds)) {
        operation.responses[status] = {
          description: names.join(', '),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        };
      }
    }
  }
  return document;
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
