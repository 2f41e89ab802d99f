import { badInput } from '../common/id-gen.error';
import { parseBodyInt, parseObjectBody, parseOptionalString, parseStepDescriptionPatch, truncate } from '../common/input';
import { checkPatternForReset, parsePattern } from './core/number-pattern';
import { RESET_PERIODS, ResetPeriod } from './core/period';
import { NewNumberFormat, NumberFormatPatch } from './number-format.repository';

export const KEY_MAX_LENGTH = 64;
export const DEFAULT_NUMBER_STEP = 100;
export const MAX_NUMBER_STEP = 100_000;
export const NUMBER_DESCRIPTION_MAX = 256;
export const NUMBER_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** A format key: 1..64 of `A-Z a-z 0-9 . _ : -`, starting with a letter or digit. */
export function parseNumberKey(name: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > KEY_MAX_LENGTH || !NUMBER_KEY_PATTERN.test(raw)) {
    const shown = typeof raw === 'string' ? truncate(raw) : '';
    throw badInput(
      `${name} must be 1..${KEY_MAX_LENGTH} of A-Z a-z 0-9 . _ : - starting with a letter or digit, got '${shown}'`,
    );
  }
  return raw;
}

/** `POST /admin/numbers` body: `{key, pattern, reset?, step?, description?, allowTextOverlap?}`. */
export function parseCreateFormat(body: unknown): NewNumberFormat {
  const b = parseObjectBody(body, ['key', 'pattern', 'reset', 'step', 'description', 'allowTextOverlap']);
  if (b.allowTextOverlap !== undefined && typeof b.allowTextOverlap !== 'boolean') {
    throw badInput('allowTextOverlap must be true or false');
  }
  const key = parseNumberKey('key', b.key);
  const pattern = parsePattern(b.pattern);
  const reset = parseReset(b.reset);
  checkPatternForReset(pattern, reset);
  return {
    key,
    pattern: pattern.source,
    reset,
    step: b.step === undefined ? DEFAULT_NUMBER_STEP : parseBodyInt('step', b.step, 1, MAX_NUMBER_STEP),
    description: parseOptionalString('description', b.description, NUMBER_DESCRIPTION_MAX) ?? null,
    allowTextOverlap: b.allowTextOverlap === true,
  };
}

/** `PATCH /admin/numbers/{key}` body: step and/or description (null clears it); never the pattern or reset. */
export function parsePatchFormat(body: unknown): NumberFormatPatch {
  const b = parseObjectBody(body, ['step', 'description', 'pattern', 'reset']);
  if (b.pattern !== undefined || b.reset !== undefined) {
    throw badInput(
      'pattern and reset cannot change: numbers already issued could be printed again; create a format with a new key',
    );
  }
  return parseStepDescriptionPatch(b, MAX_NUMBER_STEP, NUMBER_DESCRIPTION_MAX);
}

function parseReset(raw: unknown): ResetPeriod {
  if (raw === undefined) {
    return 'none';
  }
  if (typeof raw !== 'string' || !(RESET_PERIODS as readonly string[]).includes(raw)) {
    throw badInput(`reset must be one of ${RESET_PERIODS.join(', ')}`);
  }
  return raw as ResetPeriod;
}
