import { badInput } from '../common/id-gen.error';
import {
  parseBodyBigint,
  parseBodyInt,
  parseObjectBody,
  parseOptionalString,
  parseRequiredString,
  parseStepDescriptionPatch,
  truncate,
} from '../common/input';
import { LeafAllocPatch, NewLeafAlloc } from './leaf-alloc.repository';

export const DEFAULT_TAG_STEP = 1000;
/** Largest `max_id` a new tag may start at: leaves 2^62 IDs of headroom below 2^63. */
export const MAX_INITIAL_MAX_ID = 2n ** 62n;
/** Leaf's `description varchar(256)`. */
const DESCRIPTION_MAX = 256;
/** Tags created through the admin API: URL-safe, no spaces (tags made by SQL may be anything). */
const NEW_TAG = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A biz_tag from a path: 1..maxLength characters, no control characters. */
export function parseSegmentKey(name: string, raw: unknown, maxLength: number): string {
  const key = parseRequiredString(name, raw, maxLength);
  if (CONTROL.test(key)) {
    throw badInput(`${name} must not contain control characters`);
  }
  return key;
}

/** `POST /admin/segment/tags` body. */
export function parseCreateTag(body: unknown, maxLength: number, maxStep: number): NewLeafAlloc {
  const b = parseObjectBody(body, ['tag', 'step', 'maxId', 'description']);
  const tag = parseRequiredString('tag', b.tag, maxLength);
  if (!NEW_TAG.test(tag)) {
    throw badInput(`tag must start with a letter or digit and use only A-Z a-z 0-9 . _ : -, got '${truncate(tag)}'`);
  }
  // Omitted: 1 for a new tag; a tag deleted before resumes where it was (leaf_alloc_retired).
  const maxId = b.maxId === undefined ? null : parseBodyBigint('maxId', b.maxId, MAX_INITIAL_MAX_ID);
  if (maxId !== null && maxId < 1n) {
    throw badInput(`maxId must be an integer 1..${MAX_INITIAL_MAX_ID}`);
  }
  return {
    tag,
    step: b.step === undefined ? DEFAULT_TAG_STEP : parseBodyInt('step', b.step, 1, maxStep),
    maxId,
    description: parseOptionalString('description', b.description, DESCRIPTION_MAX) ?? null,
  };
}

/** `PATCH /admin/segment/tags/{tag}` body: step and/or description (null clears it). */
export function parsePatchTag(body: unknown, maxStep: number): LeafAllocPatch {
  return parseStepDescriptionPatch(parseObjectBody(body, ['step', 'description']), maxStep, DESCRIPTION_MAX);
}
