import { badInput } from '../common/id-gen.error';
import {
  parseBodyBigint,
  parseBodyInt,
  parseObjectBody,
  parseOptionalString,
  parseRequiredString,
} from '../common/input';
import { MAX_APP_ID, MAX_SIGNED_64 } from '../queue-id/core/queue-id-layout';
import { AppPatch, NewApp } from '../queue-id/id-alloc.repository';

export const DEFAULT_STEP = 1000;

/** `POST /admin/apps` body → NewApp. */
export function parseCreateApp(body: unknown, maxStep: number): NewApp {
  const b = parseObjectBody(body, ['appId', 'appName', 'step', 'maxLimitId', 'description']);
  return {
    appId: parseBodyInt('appId', b.appId, 0, MAX_APP_ID),
    appName: parseRequiredString('appName', b.appName, 128),
    step: b.step === undefined ? DEFAULT_STEP : parseBodyInt('step', b.step, 1, maxStep),
    maxLimitId: b.maxLimitId === undefined ? 0n : parseBodyBigint('maxLimitId', b.maxLimitId, MAX_SIGNED_64),
    description: parseOptionalString('description', b.description, 255) ?? null,
  };
}

/** `PATCH /admin/apps/{appId}` body → AppPatch with at least one field. */
export function parsePatchApp(body: unknown, maxStep: number): AppPatch {
  const b = parseObjectBody(body, ['appName', 'step', 'maxLimitId', 'description']);
  const patch: AppPatch = {};
  if (b.appName !== undefined) {
    patch.appName = parseRequiredString('appName', b.appName, 128);
  }
  if (b.step !== undefined) {
    patch.step = parseBodyInt('step', b.step, 1, maxStep);
  }
  if (b.maxLimitId !== undefined) {
    patch.maxLimitId = parseBodyBigint('maxLimitId', b.maxLimitId, MAX_SIGNED_64);
  }
  if (b.description !== undefined) {
    patch.description = b.description === null ? null : (parseOptionalString('description', b.description, 255) ?? null);
  }
  if (Object.keys(patch).length === 0) {
    throw badInput('nothing to change: give appName, step, maxLimitId or description');
  }
  return patch;
}
