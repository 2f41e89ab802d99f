import { AppConfig } from './app-config';

/**
 * One injection token per configuration section, so that a class receives only the section it
 * uses (`@Inject(QUEUE_CONFIG) queue: QueueConfig`). APP_CONFIG (the whole blob) is kept for the
 * composition root only: start-up, the start check and the module factories.
 */
export const HTTP_CONFIG = Symbol('HTTP_CONFIG');
export const LOG_CONFIG = Symbol('LOG_CONFIG');
export const DATABASE_CONFIG = Symbol('DATABASE_CONFIG');
export const REDIS_CONFIG = Symbol('REDIS_CONFIG');
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
export const QUEUE_CONFIG = Symbol('QUEUE_CONFIG');
export const SEGMENT_CONFIG = Symbol('SEGMENT_CONFIG');
export const SNOWFLAKE_CONFIG = Symbol('SNOWFLAKE_CONFIG');
export const ID_HISTORY_CONFIG = Symbol('ID_HISTORY_CONFIG');
export const NUMBERS_CONFIG = Symbol('NUMBERS_CONFIG');
export const METRICS_CONFIG = Symbol('METRICS_CONFIG');
/** The shutdown deadline, ms (a number, not a section). */
export const SHUTDOWN_TIMEOUT_MS = Symbol('SHUTDOWN_TIMEOUT_MS');

export type HttpConfig = AppConfig['http'];
export type LogConfig = AppConfig['log'];
export type DatabaseConfig = AppConfig['database'];
export type AdminConfig = AppConfig['admin'];
export type QueueConfig = AppConfig['queue'];
export type SegmentConfig = AppConfig['segment'];

/** The providers of every section token, built from one validated AppConfig. */
export function sectionProviders(config: AppConfig): { provide: symbol; useValue: unknown }[] {
  return [
    { provide: HTTP_CONFIG, useValue: config.http },
    { provide: LOG_CONFIG, useValue: config.log },
    { provide: DATABASE_CONFIG, useValue: config.database },
    { provide: REDIS_CONFIG, useValue: config.redis },
    { provide: ADMIN_CONFIG, useValue: config.admin },
    { provide: QUEUE_CONFIG, useValue: config.queue },
    { provide: SEGMENT_CONFIG, useValue: config.segment },
    { provide: SNOWFLAKE_CONFIG, useValue: config.snowflake },
    { provide: ID_HISTORY_CONFIG, useValue: config.idHistory },
    { provide: NUMBERS_CONFIG, useValue: config.numbers },
    { provide: METRICS_CONFIG, useValue: config.metrics },
    { provide: SHUTDOWN_TIMEOUT_MS, useValue: config.shutdownTimeoutMs },
  ];
}

export const SECTION_TOKENS: symbol[] = [
  HTTP_CONFIG, LOG_CONFIG, DATABASE_CONFIG, REDIS_CONFIG, ADMIN_CONFIG, QUEUE_CONFIG,
  SEGMENT_CONFIG, SNOWFLAKE_CONFIG, ID_HISTORY_CONFIG, NUMBERS_CONFIG, METRICS_CONFIG,
  SHUTDOWN_TIMEOUT_MS,
];
