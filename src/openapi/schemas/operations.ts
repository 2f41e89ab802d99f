import type { SchemaObject } from '@nestjs/swagger';
import { SNOWFLAKE_LAYOUT_NAMES, SNOWFLAKE_MODES } from '../../config/snowflake-config';
import { HOME_LINKS } from '../../home/home.controller';
import { MAX_APP_ID, SHARD_COUNT } from '../../queue-id/core/queue-id-layout';
import { SnowflakeLayout } from '../../snowflake/core/snowflake-layout';
import { DECIMAL, ISO_TIME, closed, int, nullable, ref } from './common';

const COUNTS: SchemaObject = { type: 'object', additionalProperties: { type: 'number' } };

/** One indicator of /health/ready: up or down, a message when down, and its own details. */
const INDICATOR: SchemaObject = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['up', 'down'] }, message: { type: 'string' } },
  additionalProperties: true,
};
const INDICATORS: SchemaObject = { type: 'object', additionalProperties: INDICATOR };

/** Snowflake (its ranges those of the configured bit layout), the home page's links, health and the dashboard's data. */
export function operationsSchemas(layout: SnowflakeLayout): Record<string, SchemaObject> {
  return {
    DecodedSnowflakeId: closed({
      timestamp: int(0, undefined, 'ms since 1970'),
      isoTime: ISO_TIME,
      workerId: int(0, layout.maxWorkerId),
      sequence: int(0, layout.maxSequence),
    }),
    ClockTime: closed({ timestamp: int(0, undefined, "this instance's clock, ms since 1970"), isoTime: ISO_TIME }),
    SnowflakeStatus: closed({
      mode: { type: 'string', enum: [...SNOWFLAKE_MODES] },
      layout: { type: 'string', enum: [...SNOWFLAKE_LAYOUT_NAMES], description: 'SNOWFLAKE_LAYOUT' },
      bits: closed({ time: int(1, 63), workerId: int(1, 63), sequence: int(1, 63) }, [], 'the bit split of the layout'),
      maxWorkerId: int(0, layout.maxWorkerId, "the layout's largest worker id"),
      twepoch: int(0, undefined, 'SNOWFLAKE_TWEPOCH, ms since 1970: the epoch of the time bits'),
      identity: { type: 'string', description: "this instance's ip:port in the worker-id registry" },
      workerId: nullable(int(0, layout.maxWorkerId)),
      serving: { type: 'boolean' },
      lastReport: nullable({ ...ISO_TIME, description: 'the last successful report to the registry' }),
      recordedUntil: nullable({ ...ISO_TIME, description: 'the time recorded in the registry: IDs are issued only below it (the generator ceiling)' }),
      reportIntervalMs: int(1),
    }),
    Live: closed({ status: { type: 'string', enum: ['ok'] } }),
    Readiness: {
      type: 'object',
      required: ['status'],
      description:
        'ok (200) when MySQL, Redis (its client and, standalone, the queue pop connection) and ZooKeeper in a zk mode answer and every enabled generator is initialised; ' +
        'else error (503) with each backend or generator that is down in `error`, its message naming it, its variable and address',
      properties: { status: { type: 'string', enum: ['ok', 'error'] }, info: INDICATORS, error: INDICATORS, details: INDICATORS },
      additionalProperties: false,
    },
    HistoryPoint: closed({
      at: int(0, undefined, 'ms since 1970: the end of the interval'),
      idsPerSecond: COUNTS,
      refillsPerMinute: { type: 'number' },
      refillFailuresPerMinute: { type: 'number' },
      serverErrorsPerMinute: { type: 'number' },
      clientErrorsPerMinute: { type: 'number' },
      queueDepth: nullable({ ...COUNTS, description: 'queued IDs per app, null when the read failed' }),
    }),
    AppForecast: closed({
      appId: int(0, MAX_APP_ID),
      remaining: DECIMAL,
      idsPerSecond: { type: 'number' },
      secondsLeft: nullable({ type: 'number', description: 'null: nothing consumed over the window (never at this rate)' }),
      firstShard: int(0, SHARD_COUNT - 1),
    }),
    DashboardHistory: closed({
      intervalMs: int(0, undefined, 'METRICS_HISTORY_INTERVAL_MS; 0 = history off'),
      spanMs: int(1),
      forecastWindowMs: int(1),
      points: { type: 'array', items: ref('HistoryPoint') },
      forecast: { type: 'array', items: ref('AppForecast') },
    }),
    Home: closed(
      {
        name: { type: 'string', enum: ['shardleaf'] },
        links: closed(Object.fromEntries(Object.entries(HOME_LINKS).map(([name, href]) => [name, { type: 'string', enum: [href] }]))),
      },
      [],
      'where to go from here: the API reference, the dashboard, readiness and metrics',
    ),
  };
}
