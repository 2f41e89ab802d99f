import type { SchemaObject } from '@nestjs/swagger';
import { ErrorKind } from '../../common/id-gen.error';

/** A reference to a component schema of the document. */
export function ref(name: string): SchemaObject {
  return { $ref: `#/components/schemas/${name}` } as SchemaObject;
}

/** A 64-bit integer on the wire: a decimal string (a JS number loses precision above 2^53). */
export const DECIMAL: SchemaObject = { type: 'string', pattern: '^[0-9]{1,20}$', description: 'a non-negative integer as a decimal string' };

/** An ID: a positive 63-bit integer as a decimal string. */
export const ID: SchemaObject = { type: 'string', pattern: '^[1-9][0-9]{0,18}$', example: '16385' };

/** An ISO-8601 time. */
export const ISO_TIME: SchemaObject = { type: 'string', format: 'date-time' };

export function int(minimum?: number, maximum?: number, description?: string): SchemaObject {
  return { type: 'integer', ...(minimum === undefined ? {} : { minimum }), ...(maximum === undefined ? {} : { maximum }), ...(description ? { description } : {}) };
}

/** An object with exactly these properties, all required unless listed as optional. */
export function closed(properties: Record<string, SchemaObject>, optional: readonly string[] = [], description?: string): SchemaObject {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return {
    type: 'object',
    ...(description ? { description } : {}),
    ...(required.length > 0 ? { required } : {}),
    properties,
    additionalProperties: false,
  };
}

export function nullable(schema: SchemaObject): SchemaObject {
  return { ...schema, nullable: true };
}

/** Every error reply: `{code, error, message}`. */
export const ERROR: SchemaObject = closed({
  code: int(undefined, undefined, 'numeric error code (Meituan Leaf codes where they exist)'),
  error: { type: 'string', enum: Object.values(ErrorKind) },
  message: { type: 'string' },
});

/** `{"ids": [...]}` of a batch of 1..max IDs. */
export const ID_BATCH: SchemaObject = closed({ ids: { type: 'array', items: ID, minItems: 1 } }, [], 'the IDs of a batch (`count` of them), in the order handed out');
