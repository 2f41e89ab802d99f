import { ErrorKind } from '../common/id-gen.error';

const ADMIN = [ErrorKind.Unauthorized, ErrorKind.AdminDisabled, ErrorKind.BackendUnavailable];
const BODY = [ErrorKind.BadInput, ErrorKind.PayloadTooLarge, ErrorKind.UnsupportedMediaType];

/**
 * The error kinds each route can answer, keyed `METHOD /path/{param}` as in the OpenAPI
 * document. Every route may also answer METHOD_NOT_ALLOWED, INTERNAL and SHUTTING_DOWN (added for
 * all in openapi.setup.ts: the shutdown gate answers any request that arrives while stopping).
 */
export const ROUTE_ERRORS: Record<string, ErrorKind[]> = {
  'GET /api/id/{appId}': [
    ErrorKind.BadInput,
    ErrorKind.QueueNotInitialised,
    ErrorKind.QueueAppNotFound,
    ErrorKind.QueueShardNotFound,
    ErrorKind.QueueEmpty,
    ErrorKind.QueueExhausted,
    ErrorKind.QueueMarkerInvalid,
    // REDIS_WAIT_REPLICAS: the pop was not confirmed by enough replicas.
    ErrorKind.QueueNotReplicated,
    ErrorKind.BackendUnavailable,
  ],
  'POST /api/id/{appId}/lease': [
    ErrorKind.BadInput,
    ErrorKind.QueueAppNotFound,
    ErrorKind.QueueEmpty,
    ErrorKind.QueueExhausted,
    ErrorKind.QueueMarkerInvalid,
    ErrorKind.BackendUnavailable,
  ],
  'POST /api/segment/lease/{key}': [
    ErrorKind.BadInput,
    ErrorKind.SegmentDisabled,
    ErrorKind.SegmentKeyNotFound,
    // A row whose max_id is below 1 (made by hand in SQL).
    ErrorKind.Conflict,
    ErrorKind.BackendUnavailable,
  ],
  'GET /api/segment/get/{key}': [
    ErrorKind.BadInput,
    ErrorKind.SegmentDisabled,
    ErrorKind.SegmentNotInitialised,
    ErrorKind.SegmentKeyNotFound,
    ErrorKind.SegmentBothNotReady,
    ErrorKind.BackendUnavailable,
  ],
  'GET /api/id/decode/{id}': [ErrorKind.BadInput, ErrorKind.BackendUnavailable],
  'GET /api/id/{appId}/at': [ErrorKind.BadInput, ErrorKind.NotFound, ErrorKind.BackendUnavailable],
  'GET /api/segment/decode/{tag}/{id}': [ErrorKind.BadInput, ErrorKind.SegmentDisabled, ErrorKind.BackendUnavailable],
  'GET /api/segment/at/{tag}': [ErrorKind.BadInput, ErrorKind.SegmentDisabled, ErrorKind.NotFound, ErrorKind.BackendUnavailable],
  'GET /api/snowflake/get/{key}': [
    ErrorKind.BadInput,
    ErrorKind.SnowflakeDisabled,
    ErrorKind.SnowflakeNotReady,
    ErrorKind.SnowflakeLeaseLost,
    ErrorKind.SnowflakeClockBackwards,
    ErrorKind.SnowflakeTimeOverflow,
  ],
  'GET /api/snowflake/decode/{id}': [ErrorKind.BadInput],
  'GET /api/number/{key}': [
    ErrorKind.BadInput,
    ErrorKind.NumberFormatNotFound,
    ErrorKind.NumberExhausted,
    ErrorKind.BackendUnavailable,
  ],
  'GET /api/snowflake/time': [],
  'POST /admin/apps': [...ADMIN, ...BODY, ErrorKind.Conflict],
  'GET /admin/apps': ADMIN,
  'GET /admin/apps/{appId}': [...ADMIN, ErrorKind.BadInput, ErrorKind.NotFound],
  'PATCH /admin/apps/{appId}': [...ADMIN, ...BODY, ErrorKind.NotFound],
  'DELETE /admin/apps/{appId}': [...ADMIN, ErrorKind.BadInput, ErrorKind.NotFound],
  'POST /admin/apps/{appId}/refill': [...ADMIN, ErrorKind.BadInput, ErrorKind.NotFound],
  'POST /admin/segment/tags': [...ADMIN, ...BODY, ErrorKind.SegmentDisabled, ErrorKind.Conflict],
  'GET /admin/segment/tags': [...ADMIN, ErrorKind.SegmentDisabled],
  'GET /admin/segment/tags/{tag}': [...ADMIN, ErrorKind.BadInput, ErrorKind.SegmentDisabled, ErrorKind.NotFound],
  'PATCH /admin/segment/tags/{tag}': [...ADMIN, ...BODY, ErrorKind.SegmentDisabled, ErrorKind.NotFound],
  'DELETE /admin/segment/tags/{tag}': [...ADMIN, ErrorKind.BadInput, ErrorKind.SegmentDisabled, ErrorKind.NotFound],
  'GET /admin/segment/cache': [...ADMIN, ErrorKind.SegmentDisabled],
  'GET /admin/segment/db': [...ADMIN, ErrorKind.SegmentDisabled],
  'GET /admin/snowflake': ADMIN,
  'POST /admin/numbers': [...ADMIN, ...BODY, ErrorKind.Conflict, ErrorKind.NumberTextOverlap],
  'GET /admin/numbers': ADMIN,
  'GET /admin/numbers/{key}': [...ADMIN, ErrorKind.BadInput, ErrorKind.NotFound],
  'PATCH /admin/numbers/{key}': [...ADMIN, ...BODY, ErrorKind.NotFound],
  'DELETE /admin/numbers/{key}': [...ADMIN, ErrorKind.BadInput, ErrorKind.NotFound],
  'GET /admin/dashboard/history': [ErrorKind.Unauthorized, ErrorKind.AdminDisabled],
  'GET /health/live': [],
  'GET /health/ready': [],
  // UNAUTHORIZED only when METRICS_TOKEN is set.
  'GET /metrics': [ErrorKind.Unauthorized, ErrorKind.BackendUnavailable],
  'GET /dashboard': [],
  'GET /': [],
};
