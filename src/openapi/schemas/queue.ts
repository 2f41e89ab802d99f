import type { SchemaObject } from '@nestjs/swagger';
import { DEFAULT_STEP } from '../../queue-id/admin/admin-apps.input';
import { JS_SAFE_MAX_INDEX, MAX_APP_ID, SHARD_COUNT } from '../../queue-id/core/queue-id-layout';
import { DECIMAL, ID, ISO_TIME, closed, int, nullable, ref } from './common';

const APP_ID = int(0, MAX_APP_ID);
const APP_NAME: SchemaObject = { type: 'string', minLength: 1, maxLength: 128 };
const DESCRIPTION: SchemaObject = { type: 'string', maxLength: 255 };
/** A number up to 2^53 - 1, or a decimal string for any 64-bit value. */
const LIMIT: SchemaObject = {
  oneOf: [int(0, Number.MAX_SAFE_INTEGER), { type: 'string', pattern: '^[0-9]{1,19}$' }],
  description:
    'caps every ID of the app; 0 = no limit, else at least (1 << 14) | (63 << 8) | appId so every shard keeps index 1. ' +
    'A number, or a decimal string (needed above 2^53)',
};

const SUMMARY = {
  appId: APP_ID,
  appName: { type: 'string' } as SchemaObject,
  description: nullable({ type: 'string' }),
  step: int(1),
  maxLimitId: { ...DECIMAL, description: '"0" = no limit' },
  shardCount: int(0, SHARD_COUNT),
  queueLength: int(0, undefined, 'IDs queued in Redis, all shards'),
  remainingCapacity: { ...DECIMAL, description: 'IDs the app can still hand out: queued + not yet allocated (under max_limit_id, or the 49-bit index range)' },
  exhaustedShards: int(0, SHARD_COUNT),
  createTime: ISO_TIME,
  updateTime: ISO_TIME,
};

const SHARD = closed({
  shardId: int(0, SHARD_COUNT - 1),
  maxId: DECIMAL,
  step: int(1),
  refillSize: int(1, undefined, "IDs this instance's last refill of the shard took: the step, or more while the shard is hot"),
  queueLength: int(0),
  unallocated: { ...DECIMAL, description: 'indexes not yet taken from the DB before the limit (or the 49-bit index range)' },
  remainingCapacity: { ...DECIMAL, description: 'queued + unallocated' },
  jsSafe: { type: 'boolean', description: 'every index allocated so far (maxId) is at most jsSafeMaxIndex: all its IDs below 2^53' },
});

/** The detail of an app: its summary, up to which index its IDs stay below 2^53, and its shards. */
const DETAIL = {
  ...SUMMARY,
  jsSafeMaxIndex: {
    ...DECIMAL,
    enum: [JS_SAFE_MAX_INDEX.toString()],
    description: "up to this index (2^39 - 1) the app's IDs stay below 2^53 on every shard (exact as a JavaScript number)",
  },
  shards: { type: 'array', items: ref('ShardView') } as SchemaObject,
};

/** The queue-ID component schemas: leases and the admin API of `/admin/apps`. */
export const QUEUE_SCHEMAS: Record<string, SchemaObject> = {
  QueueLease: closed(
    {
      appId: APP_ID,
      shard: int(0, SHARD_COUNT - 1),
      from: DECIMAL,
      to: DECIMAL,
      count: int(1, undefined, 'to - from + 1: at least the count asked (whole steps)'),
      maxLimitId: { ...DECIMAL, description: "the app's max_limit_id at the lease (\"0\" = no limit): hand out no ID above it" },
    },
    [],
    'indexes from..to (inclusive) of the shard, owned by the caller alone; its IDs are index << 14 | shard << 8 | appId',
  ),
  AppSummary: closed(SUMMARY),
  ShardView: SHARD,
  AppDetail: closed(DETAIL),
  CreatedApp: closed({
    ...DETAIL,
    resumedShards: int(0, SHARD_COUNT, 'shards that resumed above a deleted app of the same appId (its tombstone)'),
  }),
  AppList: closed({ apps: { type: 'array', items: ref('AppSummary') } }),
  RemovedApp: closed({
    appId: APP_ID,
    deletedRows: int(0, SHARD_COUNT),
    deletedLists: int(0),
    retiredMaxId: { ...DECIMAL, description: 'highest index the app ever allocated on any shard; a re-create resumes above it' },
  }),
  RefillResult: closed(
    {
      appId: APP_ID,
      refilled: int(0, SHARD_COUNT),
      sufficient: int(0, SHARD_COUNT),
      busy: int(0, SHARD_COUNT),
      exhausted: int(0, SHARD_COUNT),
      missing: int(0, SHARD_COUNT),
      refused: int(0, SHARD_COUNT),
    },
    [],
    'how many shards ended in each state',
  ),
  DecodedQueueId: closed({
    id: ID,
    appId: APP_ID,
    shard: int(0, SHARD_COUNT - 1),
    index: DECIMAL,
    allocatedAt: nullable({ ...ISO_TIME, description: "when the ID's range was allocated (id_alloc_history); null when older than the history or never allocated" }),
  }),
  QueueIdAtTime: closed(
    { appId: APP_ID, shard: int(0, SHARD_COUNT - 1), id: ID, index: DECIMAL, allocatedAt: ISO_TIME },
    [],
    'the first ID of the first range the shard allocated at or after the time asked: every ID of the shard above it was allocated then or later',
  ),
};

/** The bodies of `POST /admin/apps` and `PATCH /admin/apps/{appId}` (admin-apps.input.ts parses them). */
export function queueBodySchemas(maxStep: number): Record<string, SchemaObject> {
  const step = int(1, maxStep, `IDs one refill takes from the DB (default ${DEFAULT_STEP})`);
  return {
    CreateAppBody: closed({ appId: APP_ID, appName: APP_NAME, step, maxLimitId: LIMIT, description: nullable(DESCRIPTION) }, [
      'step',
      'maxLimitId',
      'description',
    ]),
    PatchAppBody: {
      ...closed({ appName: APP_NAME, step, maxLimitId: LIMIT, description: nullable({ ...DESCRIPTION, description: 'null clears it' }) }, [
        'appName',
        'step',
        'maxLimitId',
        'description',
      ]),
      minProperties: 1,
    },
  };
}
