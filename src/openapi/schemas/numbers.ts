import type { SchemaObject } from '@nestjs/swagger';
import { MAX_SEQ_WIDTH, PATTERN_MAX_LENGTH } from '../../numbers/core/number-pattern';
import { RESET_PERIODS } from '../../numbers/core/period';
import { DEFAULT_NUMBER_STEP, KEY_MAX_LENGTH, MAX_NUMBER_STEP, NUMBER_DESCRIPTION_MAX, NUMBER_KEY_PATTERN } from '../../numbers/numbers.input';
import { DECIMAL, ISO_TIME, closed, int, nullable, ref } from './common';

/** A format key, as parseNumberKey accepts it. */
export const NUMBER_KEY: SchemaObject = { type: 'string', minLength: 1, maxLength: KEY_MAX_LENGTH, pattern: NUMBER_KEY_PATTERN.source };

/** A formatted number: literal text, date digits and the sequence's digits (bases 36 and 62 included). */
export const FORMATTED_NUMBER: SchemaObject = { type: 'string', pattern: '^[A-Za-z0-9_.:/#@+-]+$', example: 'ORD20261126000001' };

/** A period's key: '' (reset none), yyyy, yyyyMM or yyyyMMdd on the database's calendar. */
const PERIOD: SchemaObject = {
  type: 'string',
  pattern: '^([0-9]{4}([0-9]{2}([0-9]{2})?)?)?$',
  description: "'' (reset none), yyyy (yearly), yyyyMM (monthly) or yyyyMMdd (daily), by the database's UTC clock in NUMBER_TIME_ZONE",
};
const RESET: SchemaObject = { type: 'string', enum: [...RESET_PERIODS] };

const SEGMENT = closed(
  {
    period: PERIOD,
    next: { ...DECIMAL, description: 'the next sequence this segment hands out' },
    max: { ...DECIMAL, description: 'its last sequence' },
    left: DECIMAL,
    validForMs: int(undefined, undefined, 'ms the segment may still be used without reading the database clock (may be negative)'),
  },
  [],
  "one of this instance's segments of a key",
);

const FORMAT = {
  key: NUMBER_KEY,
  pattern: { type: 'string', description: 'as stored: sequence widths without leading zeros ({seq:06} is {seq:6})' } as SchemaObject,
  reset: RESET,
  step: int(1, MAX_NUMBER_STEP),
  description: nullable({ type: 'string' }),
  createTime: ISO_TIME,
  updateTime: ISO_TIME,
  capacity: { ...DECIMAL, description: 'the largest sequence of a period (10^N - 1, 36^N - 1 or 62^N - 1); the number after it answers NUMBER_EXHAUSTED' },
  length: int(1, undefined, 'characters of every number'),
  latest: {
    ...closed({ period: PERIOD, maxSeq: DECIMAL, left: DECIMAL }),
    nullable: true,
    description: 'the latest period allocated by any instance, its highest sequence and what is left of it; null before the first',
  } as SchemaObject,
  buffer: { allOf: [ref('NumberBuffer')], nullable: true, description: "this instance's segments of the key, null when it served none" } as SchemaObject,
};

/** The formatted-number component schemas: formats, this instance's buffers, a batch of numbers. */
export const NUMBER_SCHEMAS: Record<string, SchemaObject> = {
  NumberBatch: closed({ numbers: { type: 'array', items: FORMATTED_NUMBER, minItems: 1 } }, [], 'the numbers of a batch (`count` of them), in order'),
  NumberSegment: SEGMENT,
  NumberBuffer: closed({
    key: NUMBER_KEY,
    loading: { type: 'boolean' },
    current: { allOf: [ref('NumberSegment')], nullable: true },
    next: { allOf: [ref('NumberSegment')], nullable: true },
    exhaustedPeriod: nullable({ ...PERIOD, description: 'the period this instance knows to be used up' }),
  }),
  NumberFormat: closed(FORMAT),
  NumberFormatDetail: closed({
    ...FORMAT,
    periods: {
      type: 'array',
      maxItems: 10,
      description: 'the latest periods, newest first, and their highest sequence',
      items: closed({ period: PERIOD, maxSeq: DECIMAL, updateTime: ISO_TIME }),
    },
  }),
  NumberFormatList: closed({ formats: { type: 'array', items: ref('NumberFormat') } }),
  NumberFormatDeleted: closed({ key: NUMBER_KEY, deleted: { type: 'boolean', enum: [true] } }),
};

/** The bodies of `POST /admin/numbers` and `PATCH /admin/numbers/{key}` (numbers.input.ts parses them). */
export function numberBodySchemas(): Record<string, SchemaObject> {
  const step = int(1, MAX_NUMBER_STEP, `sequences one allocation takes (default ${DEFAULT_NUMBER_STEP})`);
  const description = nullable({ type: 'string', maxLength: NUMBER_DESCRIPTION_MAX, description: 'null clears it' });
  return {
    CreateNumberFormatBody: closed(
      {
        key: NUMBER_KEY,
        pattern: {
          type: 'string',
          minLength: 1,
          maxLength: PATTERN_MAX_LENGTH,
          example: 'ORD{yyyyMMdd}{seq:6}',
          description:
            'literal text (A-Z a-z 0-9 _ . : / # @ + -), date parts {yyyy} {yy} {MM} {dd} {HH} (or a run: {yyyyMMdd}) and exactly one ' +
            `{seq:N} (1..${MAX_SEQ_WIDTH[10]} decimal digits, zero-padded), {seq36:N} (1..${MAX_SEQ_WIDTH[36]} upper-case base-36 digits, 0-9A-Z) ` +
            `or {seq62:N} (1..${MAX_SEQ_WIDTH[62]} base-62 digits, 0-9A-Za-z: case-sensitive, store such numbers in a binary or _bin column); ` +
            'a width is stored without leading zeros; the pattern must print the date parts that tell the periods of its reset apart',
        },
        reset: {
          ...RESET,
          description:
            "when the sequence starts again at 1 (default none): periods and the printed date come from the database's UTC clock, " +
            'days (months, years) counted in the UTC offset NUMBER_TIME_ZONE (default +00:00)',
        },
        step,
        description,
        allowTextOverlap: {
          type: 'boolean',
          default: false,
          description:
            "create it even when its pattern can print text a live or deleted format of another key can print (else 409 NUMBER_TEXT_OVERLAP); not stored",
        },
      },
      ['reset', 'step', 'description', 'allowTextOverlap'],
    ),
    PatchNumberFormatBody: {
      ...closed({ step, description }, ['step', 'description'], 'the pattern and reset never change (400): create a format with a new key'),
      minProperties: 1,
    },
  };
}
