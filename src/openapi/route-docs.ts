import type { SchemaObject } from '@nestjs/swagger';
import { TIME_PARAM_PATTERN } from '../common/input';
import { AppConfig } from '../config/app-config';
import { MAX_LEASE_COUNT } from '../lease/lease-input';
import { MAX_APP_ID, SHARD_COUNT } from '../queue-id/core/queue-id-layout';
import { layoutNamed } from '../snowflake/core/snowflake-layout';
import { ID, int, ref } from './schemas/common';
import { FORMATTED_NUMBER, NUMBER_KEY } from './schemas/numbers';

export interface ParamDoc {
  name: string;
  schema: SchemaObject;
  description?: string;
  required?: boolean;
}

/** Content type (without parameters) → schema, per success status. */
export type SuccessDoc = Record<number, Record<string, SchemaObject>>;

export interface RouteDoc {
  summary: string;
  description?: string;
  path?: ParamDoc[];
  query?: ParamDoc[];
  /** Component schema of the JSON body. */
  body?: string;
  ok: SuccessDoc;
}

const JSON_TYPE = 'application/json';
const json = (name: string) => ({ [JSON_TYPE]: ref(name) });
/** A single ID as text/plain, or `{ids}` with `count`. */
const ONE_OR_BATCH = { 'text/plain': ID, [JSON_TYPE]: ref('IdBatch') };

/**
 * Parameters, body and success responses of every route, keyed `METHOD /path/{param}` as in the
 * OpenAPI document (ROUTE_ERRORS holds their errors). Ranges come from the configuration and the
 * constants the parsers use, so the document says what the service accepts.
 */
/** The sections whose limits the document states. */
export type DocumentedConfig = Pick<AppConfig, 'queue' | 'segment' | 'snowflake' | 'numbers'>;

export function routeDocs(config: DocumentedConfig): Record<string, RouteDoc> {
  const appId: ParamDoc = { name: 'appId', schema: int(0, MAX_APP_ID), description: 'the business, 0..255' };
  const gatePass: ParamDoc = {
    name: 'gatePass',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: config.queue.gatePassMaxLength },
    description: 'user name, phone, e-mail…: selects the shard, abs(Java String.hashCode) % 64',
  };
  const batch = (max: number): ParamDoc => ({
    name: 'count',
    schema: int(1, max),
    description: `a batch of this many IDs as JSON {"ids":[…]} instead of one ID as text/plain`,
  });
  const leaseCount: ParamDoc = { name: 'count', required: true, schema: int(1, MAX_LEASE_COUNT), description: 'IDs wanted' };
  const segmentKey = (name: string): ParamDoc => ({
    name,
    schema: { type: 'string', minLength: 1, maxLength: config.segment.keyMaxLength },
    description: 'the biz_tag (a leaf_alloc row)',
  });
  const layout = layoutNamed(config.snowflake.layout);
  const anyId: ParamDoc = {
    name: 'id',
    schema: { type: 'string', pattern: '^[0-9]{1,19}$' },
    description: 'an ID, 1..2^63-1, in decimal',
  };
  const time: ParamDoc = {
    name: 'time',
    required: true,
    schema: { type: 'string', pattern: TIME_PARAM_PATTERN },
    description:
      'ISO 8601 with a zone (2026-11-26T09:00:00Z, 2026-11-26T17:00:00+08:00) or ms since 1970; years 1970..9999; ' +
      'a date or time that does not exist as written (2026-02-30, T24:00, +24:00) answers 400',
  };
  const numberKey: ParamDoc = { name: 'key', schema: NUMBER_KEY, description: 'the key of a number format' };
  const snowflakeKey: ParamDoc = {
    name: 'key',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
    description: "Leaf's key: checked, not used",
  };
  return {
    'GET /api/id/{appId}': {
      summary: 'A queue ID (or a batch) for a gatePass',
      description:
        'Pops the next index of the shard of `gatePass` and answers index << 14 | shard << 8 | appId as text/plain; ' +
        'with `count`, that many IDs of the shard as JSON {"ids": [...]}, decimal strings.',
      path: [appId],
      query: [gatePass, batch(config.queue.maxBatch)],
      ok: { 200: ONE_OR_BATCH },
    },
    'POST /api/id/{appId}/lease': { summary: 'Lease a range of queue IDs', path: [appId], query: [gatePass, leaseCount], ok: { 200: json('QueueLease') } },
    'POST /admin/apps': {
      summary: "Create an app's 64 shard rows (idempotent)",
      description: '201 when created, 200 when it already exists with the same settings, 409 CONFLICT with other settings.',
      body: 'CreateAppBody',
      ok: { 201: json('CreatedApp'), 200: json('CreatedApp') },
    },
    'GET /admin/apps': { summary: 'Every app with its queue depth and remaining capacity', ok: { 200: json('AppList') } },
    'GET /admin/apps/{appId}': { summary: 'An app and its 64 shards', path: [appId], ok: { 200: json('AppDetail') } },
    'PATCH /admin/apps/{appId}': { summary: 'Change step, maxLimitId, appName or description', path: [appId], body: 'PatchAppBody', ok: { 200: json('AppDetail') } },
    'DELETE /admin/apps/{appId}': {
      summary: "Delete an app's rows and lists (a tombstone keeps its max_id)",
      path: [appId],
      ok: { 200: json('RemovedApp') },
    },
    'POST /admin/apps/{appId}/refill': { summary: 'One more segment for every shard of the app', path: [appId], ok: { 200: json('RefillResult') } },
    'GET /api/segment/get/{key}': {
      summary: 'A Leaf segment ID (or a batch)',
      path: [segmentKey('key')],
      query: [batch(config.segment.maxBatch)],
      ok: { 200: ONE_OR_BATCH },
    },
    'POST /api/segment/lease/{key}': { summary: 'Lease a range of segment IDs', path: [segmentKey('key')], query: [leaseCount], ok: { 200: json('SegmentLease') } },
    'POST /admin/segment/tags': { summary: 'Create a segment tag (idempotent)', body: 'CreateTagBody', ok: { 201: json('Tag'), 200: json('Tag') } },
    'GET /admin/segment/tags': { summary: "Every tag with this instance's buffers", ok: { 200: json('TagList') } },
    'GET /admin/segment/tags/{tag}': { summary: 'A tag', path: [segmentKey('tag')], ok: { 200: json('Tag') } },
    'PATCH /admin/segment/tags/{tag}': { summary: "Change a tag's step or description", path: [segmentKey('tag')], body: 'PatchTagBody', ok: { 200: json('Tag') } },
    'DELETE /admin/segment/tags/{tag}': { summary: 'Delete a segment tag', path: [segmentKey('tag')], ok: { 200: json('TagDeleted') } },
    'GET /admin/segment/cache': { summary: "Leaf's /cache: this instance's double buffers", ok: { 200: json('SegmentCache') } },
    'GET /admin/segment/db': { summary: "Leaf's /db: the leaf_alloc rows", ok: { 200: json('TagRows') } },
    'GET /api/snowflake/get/{key}': {
      summary: 'A Leaf snowflake ID (or a batch)',
      path: [snowflakeKey],
      query: [batch(config.snowflake.maxBatch)],
      ok: { 200: ONE_OR_BATCH },
    },
    'GET /api/snowflake/decode/{id}': {
      summary: 'The time, worker id and sequence of a snowflake ID',
      path: [
        {
          name: 'id',
          schema: { type: 'string', pattern: `^[0-9]{1,${layout.maxId.toString().length}}$` },
          description: `a snowflake ID of this service's layout (${layout.name}), 0..${layout.maxId}, in decimal`,
        },
      ],
      ok: { 200: json('DecodedSnowflakeId') },
    },
    'GET /api/snowflake/time': { summary: "This instance's clock (the peers' clock check reads it)", ok: { 200: json('ClockTime') } },
    'GET /admin/snowflake': { summary: "This instance's worker id, mode and last report", ok: { 200: json('SnowflakeStatus') } },
    'GET /api/id/decode/{id}': {
      summary: 'Decode a queue ID: appId, shard, index, and when its range was allocated',
      path: [anyId],
      ok: { 200: json('DecodedQueueId') },
    },
    'GET /api/id/{appId}/at': {
      summary: 'The first queue ID of an app shard allocated at or after a time',
      description: 'Give exactly one of `shard` and `gatePass` (400 otherwise). 404 NOT_FOUND when the history has no allocation of the shard at or after the time.',
      path: [appId],
      query: [
        time,
        { name: 'shard', schema: int(0, SHARD_COUNT - 1), description: 'the shard, 0..63 (or gatePass)' },
        { ...gatePass, required: false, description: 'a gatePass whose shard is meant (or shard)' },
      ],
      ok: { 200: json('QueueIdAtTime') },
    },
    'GET /api/segment/decode/{tag}/{id}': {
      summary: 'When the range of a segment ID was allocated',
      path: [segmentKey('tag'), anyId],
      ok: { 200: json('DecodedSegmentId') },
    },
    'GET /api/segment/at/{tag}': {
      summary: 'The first segment ID of a tag allocated at or after a time',
      description: '404 NOT_FOUND when the history has no allocation of the tag at or after the time.',
      path: [segmentKey('tag')],
      query: [time],
      ok: { 200: json('SegmentIdAtTime') },
    },
    'GET /api/number/{key}': {
      summary: 'A formatted business number (or a batch)',
      description:
        'The next number of the format as text/plain; with `count`, that many as JSON {"numbers": [...]}, in order. ' +
        "The period (reset) and the printed date are decided by the database's UTC clock, days counted in the UTC offset NUMBER_TIME_ZONE " +
        "(default +00:00), never by an instance's clock. 410 NUMBER_EXHAUSTED when the period's sequence no longer fits its digits.",
      path: [numberKey],
      query: [{ ...batch(config.numbers.maxBatch), description: 'a batch of this many numbers as JSON {"numbers":[…]} instead of one as text/plain' }],
      ok: { 200: { 'text/plain': FORMATTED_NUMBER, [JSON_TYPE]: ref('NumberBatch') } },
    },
    'POST /admin/numbers': {
      summary: 'Create a number format (idempotent)',
      description:
        '201 created, 200 the same definition again. 409 CONFLICT: another definition of the key, or a deleted key with another ' +
        "pattern or reset (a deleted key comes back only as it was, above its old sequences). 409 NUMBER_TEXT_OVERLAP: the pattern can " +
        "print text a live or deleted format of another key can print (numbers would repeat across keys), unless allowTextOverlap is true.",
      body: 'CreateNumberFormatBody',
      ok: { 201: json('NumberFormat'), 200: json('NumberFormat') },
    },
    'GET /admin/numbers': { summary: "Every number format with this instance's segments", ok: { 200: json('NumberFormatList') } },
    'GET /admin/numbers/{key}': { summary: 'A number format and its latest periods', path: [numberKey], ok: { 200: json('NumberFormatDetail') } },
    'PATCH /admin/numbers/{key}': { summary: "Change a number format's step or description", path: [numberKey], body: 'PatchNumberFormatBody', ok: { 200: json('NumberFormat') } },
    'DELETE /admin/numbers/{key}': { summary: 'Delete a number format (a tombstone keeps its sequences)', path: [numberKey], ok: { 200: json('NumberFormatDeleted') } },
    'GET /': {
      summary: 'Links to the API reference, the dashboard, readiness and metrics',
      description: 'JSON, or a small HTML page of the same links when the request accepts text/html.',
      ok: { 200: { [JSON_TYPE]: ref('Home'), 'text/html': { type: 'string' } } },
    },
    'GET /health/live': { summary: 'Liveness: the process answers', ok: { 200: json('Live') } },
    'GET /health/ready': { summary: 'Readiness: backends answer and the generators are initialised', ok: { 200: json('Readiness'), 503: json('Readiness') } },
    'GET /metrics': { summary: 'Prometheus metrics (text exposition format)', ok: { 200: { 'text/plain': { type: 'string' } } } },
    'GET /dashboard': { summary: 'The dashboard page (it asks for the admin token)', ok: { 200: { 'text/html': { type: 'string' } } } },
    'GET /admin/dashboard/history': { summary: "The dashboard's charts and capacity forecast", ok: { 200: json('DashboardHistory') } },
  };
}
