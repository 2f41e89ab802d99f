import { badInput } from '../../common/id-gen.error';
import {
  parseBodyBigint,
  parseBodyInt,
  parseObjectBody,
  parseOptionalString,
  parseRequiredString,
} from '../../common/input';
import { MAX_APP_ID, MAX_SIGNED_64, SHARD_COUNT, composeQueueId } from '../core/queue-id-layout';
import { AppPatch, NewApp } from '../id-alloc.repository';

export const DEFAULT_STEP = 1000;

/**
 * The smallest positive maxLimitId under which every shard of the app still has index 1: the ID
 * of index 1 on the last shard, `(1 << 14) | (63 << 8) | appId`. Below it some shards (from
 * shard 63 down) would be exhausted from the start.
 */
export function minMaxLimitId(appId: number): bigint {
  return composeQueueId(1n, SHARD_COUNT - 1, appId);
}

/** maxLimitId of a body: 0 (no limit) or at least minMaxLimitId(appId). */
function parseMaxLimitId(raw: unknown, appId: number): bigint {
  const value = parseBodyBigint('maxLimitId', raw, MAX_SIGNED_64);
  const min = minMaxLimitId(appId);
  if (value > 0n && value < min) {
    throw badInput(
      `maxLimitId ${value} is too low for appId ${appId}: give 0 (no limit) or at least ${min} ` +
        `(index 1 on all ${SHARD_COUNT} shards: (1 << 14) | (63 << 8) | ${appId})`,
    );
  }
  return value;
}

/** `POST /admin/apps` body → NewApp. */
export function parseCreateApp(body: unknown, maxStep: number): NewApp {
  const b = parseObjectBody(body, ['appId', 'appName', 'step', 'maxLimitId', 'description']);
  const appId = parseBodyInt('appId', b.appId, 0, MAX_APP_ID);
  return {
    appId,
    appName: parseRequiredString('appName', b.appName, 128),
    step: b.step === undefined ? DEFAULT_STEP : parseBodyInt('step', b.step, 1, maxStep),
    maxLimitId: b.maxLimitId === undefined ? 0n : parseMaxLimitId(b.maxLimitId, appId),
    description: parseOptionalString('description', b.description, 255) ?? null,
  };
}

/** `PATCH /admin/apps/{appId}` body → AppPatch with at least one field. */
export function parsePatchApp(body: unknown, maxStep: number, appId: number): AppPatch {
  const b = parseObjectBody(body, ['appName', 'step', 'maxLimitId', 'description']);
  const patch: AppPatch = {};
  if (b.appName !== undefined) {
    patch.appName = parseRequiredString('appName', b.appName, 128);
  }
  if (b.step !== undefined) {
    patch.step = parseBodyInt('step', b.step, 1, maxStep);
  }
  if (b.maxLimitId !== undefined) {
    patch.maxLimitId = parseMaxLimitId(b.maxLimitId, appId);
  }
  if (b.description !== undefined) {
    patch.description = b.description === null ? null : (parseOptionalString('description', b.description, 255) ?? null);
  }
  if (Object.keys(patch).length === 0) {
    throw badInput('nothing to change: give appName, step, maxLimitId or description');
  }
  return patch;
}
