import Ajv, { ValidateFunction } from 'ajv';

/** The parts of an OpenAPI 3.0 document the contract tests read. */
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Record<string, unknown>;
}
export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown> };
}

const DOC_ID = 'openapi-document';

/**
 * OpenAPI 3.0 schema → JSON Schema for Ajv: `nullable: true` becomes "or null", `$ref`s point into
 * the document registered under DOC_ID, `example` is dropped.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(toJsonSchema);
  }
  if (typeof node !== 'object' || node === null) {
    return node;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'example' || key === 'nullable') {
      continue;
    }
    out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOC_ID}${value}` : toJsonSchema(value);
  }
  if ((node as { nullable?: unknown }).nullable === true) {
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** Validates values against the schemas of one OpenAPI document (refs resolved in it). */
export class OpenApiValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    this.ajv.addSchema({ $id: DOC_ID, components: toJsonSchema(doc.components) });
  }

  /** Problems of `value` against `schema` (an OpenAPI schema of the document); [] when valid. */
  problems(schema: unknown, value: unknown): string[] {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    if (validate(value)) {
      return [];
    }
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }
}
