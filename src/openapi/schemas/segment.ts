import type { SchemaObject } from '@nestjs/swagger';
import { DEFAULT_TAG_STEP, MAX_INITIAL_MAX_ID } from '../../segment/segment.input';
import { DECIMAL, ID, ISO_TIME, closed, int, nullable, ref } from './common';

const ROW = {
  tag: { type: 'string' } as SchemaObject,
  maxId: DECIMAL,
  step: int(1),
  description: nullable({ type: 'string' }),
  updateTime: ISO_TIME,
};

/** The segment component schemas: leases, tags and Leaf's /cache and /db views. */
export const SEGMENT_SCHEMAS: Record<string, SchemaObject> = {
  SegmentLease: closed(
    { key: { type: 'string' }, from: DECIMAL, to: DECIMAL, count: int(1) },
    [],
    'the IDs from..to (inclusive), exactly count of them, owned by the caller alone',
  ),
  SegmentBuffer: closed(
    {
      key: { type: 'string' },
      initOk: { type: 'boolean' },
      nextReady: { type: 'boolean' },
      loading: { type: 'boolean' },
      pos: int(0, 1),
      value0: DECIMAL,
      max0: DECIMAL,
      step0: int(0),
      value1: DECIMAL,
      max1: DECIMAL,
      step1: int(0),
      step: int(0),
      minStep: int(0),
      updateTimestamp: int(0, undefined, 'ms since 1970 of the fetch that set the step; 0 before the first preload'),
    },
    [],
    "this instance's double buffer of a tag (Leaf's /cache line)",
  ),
  TagRow: closed(ROW, [], 'a leaf_alloc row'),
  Tag: closed({ ...ROW, buffer: { allOf: [ref('SegmentBuffer')], nullable: true } }, [], 'a leaf_alloc row and this instance\'s buffer of it (null when not cached yet)'),
  TagList: closed({ tags: { type: 'array', items: ref('Tag') } }),
  TagRows: closed({ rows: { type: 'array', items: ref('TagRow') } }),
  TagDeleted: closed({ tag: { type: 'string' }, deleted: { type: 'boolean', enum: [true] } }),
  SegmentCache: closed({ initialised: { type: 'boolean' }, buffers: { type: 'array', items: ref('SegmentBuffer') } }),
  DecodedSegmentId: closed({
    tag: { type: 'string' },
    id: ID,
    allocatedAt: nullable({ ...ISO_TIME, description: "when the ID's range was allocated (leaf_alloc_history); null when older than the history or never allocated" }),
  }),
  SegmentIdAtTime: closed(
    { tag: { type: 'string' }, id: ID, allocatedAt: ISO_TIME },
    [],
    'the first ID of the first range the tag allocated at or after the time asked: every ID of the tag above it was allocated then or later',
  ),
};

/** The bodies of `POST /admin/segment/tags` and `PATCH /admin/segment/tags/{tag}` (segment.input.ts). */
export function segmentBodySchemas(keyMaxLength: number, maxStep: number): Record<string, SchemaObject> {
  const step = int(1, maxStep, `IDs one segment fetch takes (default ${DEFAULT_TAG_STEP})`);
  const description = nullable({ type: 'string', maxLength: 256 });
  return {
    CreateTagBody: closed(
      {
        tag: { type: 'string', minLength: 1, maxLength: keyMaxLength, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$' },
        step,
        maxId: {
          oneOf: [int(1, Number.MAX_SAFE_INTEGER), { type: 'string', pattern: '^[0-9]{1,19}$' }],
          description: `the first ID of the tag, 1..${MAX_INITIAL_MAX_ID} (a number, or a decimal string); omitted: 1, or where a deleted tag of that name stopped`,
        },
        description,
      },
      ['step', 'maxId', 'description'],
    ),
    PatchTagBody: { ...closed({ step, description }, ['step', 'description']), minProperties: 1 },
  };
}
